package io.pgsink.copy.write;

import io.pgsink.copy.testing.CollectingChunkConsumer;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Exact bytes for every quoting rule. That PostgreSQL reads them back as written is checked by
 * {@link CopyRoundTripPropertyTest}; these pin the encoding itself.
 */
class CsvWriterTest
{
    private static final CopyFormat BACKSLASH_ESCAPE = new CopyFormat(',', '"', '\\', "", NulCharacterHandling.FAIL);
    private static final CopyFormat BACKSLASH_N_NULL = new CopyFormat(',', '"', '"', "\\N", NulCharacterHandling.FAIL);
    private static final CopyFormat WORD_NULL = new CopyFormat(',', '"', '"', "NULL", NulCharacterHandling.FAIL);
    private static final CopyFormat STRIP = new CopyFormat(',', '"', '"', "", NulCharacterHandling.STRIP);

    @Test
    void textQuotingWithDefaultFormat()
    {
        assertThat(text(CopyFormat.DEFAULT, "plain")).isEqualTo("plain\n");
        assertThat(text(CopyFormat.DEFAULT, "a,b")).isEqualTo("\"a,b\"\n");
        assertThat(text(CopyFormat.DEFAULT, "say \"hi\"")).isEqualTo("\"say \"\"hi\"\"\"\n");
        assertThat(text(CopyFormat.DEFAULT, "a\rb")).isEqualTo("\"a\rb\"\n");
        assertThat(text(CopyFormat.DEFAULT, "a\nb")).isEqualTo("\"a\nb\"\n");
        assertThat(text(CopyFormat.DEFAULT, "a\r\nb")).isEqualTo("\"a\r\nb\"\n");
        assertThat(text(CopyFormat.DEFAULT, " spaces kept ")).isEqualTo(" spaces kept \n");
        assertThat(text(CopyFormat.DEFAULT, "tab\tok")).isEqualTo("tab\tok\n");
    }

    @Test
    void emptyStringIsQuotedAndNullIsNot()
    {
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.writeText("");
            writer.writeNull();
            writer.writeText("");
        })).isEqualTo("\"\",,\"\"\n");
        // empty strings stay quoted when the NULL string is something else, so they can never read back as NULL
        assertThat(write(BACKSLASH_N_NULL, writer -> {
            writer.writeText("");
            writer.writeNull();
        })).isEqualTo("\"\",\\N\n");
    }

    @Test
    void valueEqualToNullStringIsQuoted()
    {
        assertThat(write(WORD_NULL, writer -> {
            writer.writeNull();
            writer.writeText("NULL");
            writer.writeText("null");
            writer.writeText("NULLS");
        })).isEqualTo("NULL,\"NULL\",null,NULLS\n");
        assertThat(write(BACKSLASH_N_NULL, writer -> {
            writer.writeNull();
            writer.writeText("\\N");
        })).isEqualTo("\\N,\"\\N\"\n");
        // the same rule for values that are not text
        CopyFormat oneIsNull = new CopyFormat(',', '"', '"', "1", NulCharacterHandling.FAIL);
        assertThat(write(oneIsNull, writer -> {
            writer.writeLong(1);
            writer.writeLong(11);
            writer.writeNull();
        })).isEqualTo("\"1\",11,1\n");
        CopyFormat tIsNull = new CopyFormat(',', '"', '"', "t", NulCharacterHandling.FAIL);
        assertThat(write(tIsNull, writer -> {
            writer.writeBoolean(true);
            writer.writeBoolean(false);
        })).isEqualTo("\"t\",f\n");
    }

    @Test
    void leadingBackslashIsQuoted()
    {
        // "\." alone on a line is the end-of-data marker, even in CSV mode
        assertThat(text(CopyFormat.DEFAULT, "\\.")).isEqualTo("\"\\.\"\n");
        assertThat(text(CopyFormat.DEFAULT, "\\x")).isEqualTo("\"\\x\"\n");
        assertThat(text(CopyFormat.DEFAULT, "a\\.")).isEqualTo("a\\.\n");
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.appendAscii("\\.");
            writer.endField();
        })).isEqualTo("\"\\.\"\n");
    }

    @Test
    void escapeDifferentFromQuote()
    {
        assertThat(text(BACKSLASH_ESCAPE, "a\"b")).isEqualTo("\"a\\\"b\"\n");
        assertThat(text(BACKSLASH_ESCAPE, "a\\b")).isEqualTo("\"a\\\\b\"\n");
        assertThat(text(BACKSLASH_ESCAPE, "\\")).isEqualTo("\"\\\\\"\n");
        assertThat(text(BACKSLASH_ESCAPE, "a,b")).isEqualTo("\"a,b\"\n");
        CopyFormat odd = new CopyFormat('|', '\'', '!', "", NulCharacterHandling.FAIL);
        assertThat(write(odd, writer -> {
            writer.writeText("it's");
            writer.writeText("wow!");
            writer.writeText("a|b");
            writer.writeText("a,\"b\"");
        })).isEqualTo("'it!'s'|'wow!!'|'a|b'|a,\"b\"\n");
    }

    @Test
    void formatCharactersInNumbersAndDatesAreQuoted()
    {
        CopyFormat dotDelimiter = new CopyFormat('.', '"', '"', "", NulCharacterHandling.FAIL);
        assertThat(write(dotDelimiter, writer -> {
            writer.writeDouble(1.5);
            writer.writeLong(-2);
        })).isEqualTo("\"1.5\".-2\n");
        CopyFormat dashQuote = new CopyFormat(',', '-', '.', "", NulCharacterHandling.FAIL);
        assertThat(write(dashQuote, writer -> {
            writer.writeLong(-2);
            writer.writeDouble(0.25);
            writer.writeDouble(Double.NEGATIVE_INFINITY);
            writer.writeAscii("2020-01-02");
            writer.writeAscii("plain");
        })).isEqualTo("-.-2-,-0..25-,-.-Infinity-,-2020.-01.-02-,plain\n");
    }

    @Test
    void fieldsAndRows()
            throws SQLException
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, output);
        writer.writeLong(1);
        writer.writeText("a");
        writer.writeNull();
        writer.endRow();
        writer.writeNull();
        writer.endRow();
        writer.writeText("x");
        writer.writeBoolean(false);
        writer.endRow();
        assertThat(writer.rowsWritten()).isEqualTo(3);
        assertThat(writer.bytesWritten()).isEqualTo(10);
        assertThat(output.chunks()).isEmpty();
        writer.finish();
        assertThat(output.text()).isEqualTo("1,a,\n\nx,f\n");
        assertThat(output.chunks()).hasSize(1);
        assertThat(writer.bytesWritten()).isEqualTo(10);
    }

    @Test
    void longs()
    {
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.writeLong(0);
            writer.writeLong(7);
            writer.writeLong(-10);
            writer.writeLong(1_000_000_000_000L);
            writer.writeLong(Long.MAX_VALUE);
            writer.writeLong(Long.MIN_VALUE);
            writer.writeLong(Long.MIN_VALUE + 1);
        })).isEqualTo("0,7,-10,1000000000000,9223372036854775807,-9223372036854775808,-9223372036854775807\n");
        LastRow last = new LastRow();
        for (long value = -100_000; value <= 100_000; value += 7) {
            last.writer.writeLong(value);
            assertThat(last.end()).isEqualTo(Long.toString(value));
        }
        for (long value = 1; value > 0 && value < Long.MAX_VALUE / 3; value = value * 3 + 1) {
            last.writer.writeLong(value);
            last.writer.writeLong(-value);
            assertThat(last.end()).isEqualTo(value + "," + -value);
        }
    }

    @Test
    void floatingPoint()
    {
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.writeDouble(Double.NaN);
            writer.writeDouble(Double.POSITIVE_INFINITY);
            writer.writeDouble(Double.NEGATIVE_INFINITY);
            writer.writeDouble(-0.0);
            writer.writeDouble(0.1);
            writer.writeDouble(1e-5);
            writer.writeDouble(Double.MAX_VALUE);
        })).isEqualTo("NaN,Infinity,-Infinity,-0.0,0.1,1.0E-5,1.7976931348623157E308\n");
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.writeFloat(Float.NaN);
            writer.writeFloat(Float.POSITIVE_INFINITY);
            writer.writeFloat(Float.NEGATIVE_INFINITY);
            writer.writeFloat(0.1f);
            writer.writeFloat(Float.MIN_VALUE);
        })).isEqualTo("NaN,Infinity,-Infinity,0.1,1.4E-45\n");
    }

    @Test
    void doublesParseBackExactly()
    {
        // what PostgreSQL's correctly rounded strtod reads back: the same bits
        Random random = new Random(42);
        LastRow last = new LastRow();
        for (int i = 0; i < 200_000; i++) {
            double value = Double.longBitsToDouble(random.nextLong());
            if (!Double.isNaN(value)) {
                last.writer.writeDouble(value);
                assertThat(Double.doubleToRawLongBits(Double.parseDouble(last.end()))).isEqualTo(Double.doubleToRawLongBits(value));
            }
            float single = Float.intBitsToFloat(random.nextInt());
            if (!Float.isNaN(single)) {
                last.writer.writeFloat(single);
                assertThat(Float.floatToRawIntBits(Float.parseFloat(last.end()))).isEqualTo(Float.floatToRawIntBits(single));
            }
        }
    }

    @Test
    void utf8()
    {
        String text = "é€😀𝄞中\u007f\u0080\u07ff\u0800\uffff";
        byte[] expected = (text + "\n").getBytes(StandardCharsets.UTF_8);
        assertThat(writeBytes(CopyFormat.DEFAULT, writer -> writer.writeText(text))).isEqualTo(expected);
        assertThat(writeBytes(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.appendText(text);
            writer.endField();
        })).isEqualTo(expected);
        // a StringBuilder is encoded the same way
        assertThat(writeBytes(CopyFormat.DEFAULT, writer -> writer.writeText(new StringBuilder(text)))).isEqualTo(expected);
    }

    @Test
    void nulCharacterFailsByDefault()
            throws SQLException
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, output);
        writer.writeText("before");
        assertThatThrownBy(() -> writer.writeText("0123456789abcdef\0tail"))
                .isInstanceOf(ValueEncodingException.class)
                .hasMessage("text value contains a NUL character (U+0000) at position 17; PostgreSQL cannot store it in text (the copy format can strip it)");
        // nothing of the refused value was written: the row can go on
        writer.writeNull();
        writer.endRow();
        writer.beginField();
        assertThatThrownBy(() -> writer.appendText("\0")).isInstanceOf(ValueEncodingException.class).hasMessageContaining("at position 1");
        writer.discardRow();
        writer.finish();
        assertThat(output.text()).isEqualTo("before,\n");
    }

    @Test
    void nulCharacterStripped()
    {
        assertThat(text(STRIP, "a\0b\0")).isEqualTo("ab\n");
        // what is left decides the quoting: empty, starting with a backslash, equal to the NULL string
        assertThat(text(STRIP, "\0")).isEqualTo("\"\"\n");
        assertThat(text(STRIP, "\0\\.")).isEqualTo("\"\\.\"\n");
        CopyFormat stripWordNull = new CopyFormat(',', '"', '"', "NULL", NulCharacterHandling.STRIP);
        assertThat(text(stripWordNull, "NU\0LL")).isEqualTo("\"NULL\"\n");
        assertThat(text(stripWordNull, "NU\0LLS")).isEqualTo("NULLS\n");
        assertThat(write(STRIP, writer -> {
            writer.beginField();
            writer.appendText("x\0y");
            writer.endField();
        })).isEqualTo("xy\n");
    }

    @Test
    void unpairedSurrogates()
    {
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, new CollectingChunkConsumer());
        assertThatThrownBy(() -> writer.writeText("ab\uD83D"))
                .isInstanceOf(ValueEncodingException.class)
                .hasMessage("text value contains an unpaired surrogate U+D83D at position 3, which UTF-8 cannot encode");
        assertThatThrownBy(() -> writer.writeText("\uDE00x")).hasMessageContaining("unpaired surrogate U+DE00 at position 1");
        assertThatThrownBy(() -> writer.writeText("\uD83Dx")).hasMessageContaining("unpaired surrogate U+D83D at position 1");
        writer.beginField();
        assertThatThrownBy(() -> writer.appendText("\uDE00")).hasMessageContaining("unpaired surrogate U+DE00");
    }

    @Test
    void bytea()
    {
        byte[] bytes = {0, 1, 0x7f, (byte) 0x80, (byte) 0xff};
        assertThat(write(CopyFormat.DEFAULT, writer -> writer.writeBytea(bytes))).isEqualTo("\"\\x00017f80ff\"\n");
        assertThat(write(CopyFormat.DEFAULT, writer -> writer.writeBytea(bytes, 1, 2))).isEqualTo("\"\\x017f\"\n");
        assertThat(write(CopyFormat.DEFAULT, writer -> writer.writeBytea(new byte[0]))).isEqualTo("\"\\x\"\n");
        // the escape character is escaped inside quotes, even the backslash of \x
        assertThat(write(BACKSLASH_ESCAPE, writer -> writer.writeBytea(bytes))).isEqualTo("\"\\\\x00017f80ff\"\n");
        ByteBuffer heap = ByteBuffer.wrap(bytes, 1, 3).slice();
        heap.position(1);
        ByteBuffer direct = ByteBuffer.allocateDirect(5).put(bytes).flip();
        direct.position(3);
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.writeBytea(heap);
            writer.writeBytea(direct);
        })).isEqualTo("\"\\x7f80\",\"\\x80ff\"\n");
        assertThat(heap.position()).isEqualTo(1);
        assertThat(direct.position()).isEqualTo(3);
    }

    @Test
    void composedFieldsAndArrayElements()
    {
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.appendAscii('{');
            for (String element : new String[] {"plain", "a b", "", "NULL", "nUlL", "a\"b", "a\\b", "{x}", "a,b", "a;b", "é", "tab\t"}) {
                writer.beginArrayElement();
                writer.appendText(element);
                writer.endArrayElement();
                writer.appendAscii(',');
            }
            writer.appendArrayNull();
            writer.appendAscii('}');
            writer.endField();
        })).isEqualTo("\"{plain,\"\"a b\"\",\"\"\"\",\"\"NULL\"\",\"\"nUlL\"\",\"\"a\\\"\"b\"\",\"\"a\\\\b\"\",\"\"{x}\"\",\"\"a,b\"\",\"\"a;b\"\",é,\"\"tab\t\"\",NULL}\"\n");
        // a literal without special characters stays unquoted
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.appendAscii('{');
            writer.beginArrayElement();
            writer.appendLong(-5);
            writer.endArrayElement();
            writer.appendAscii('}');
            writer.endField();
        })).isEqualTo("{-5}\n");
        // an empty composed field is an empty string, not NULL
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.endField();
        })).isEqualTo("\"\"\n");
        assertThat(write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            writer.appendDigits(7, 4);
            writer.appendAscii('-');
            writer.appendDigits(123_456, 2);
            writer.appendAscii('/');
            writer.appendHex(0xABCDEFL, 4);
            writer.appendHex(-1L, 16);
            writer.endField();
        })).isEqualTo("0007-123456/cdefffffffffffffffff\n");
    }

    @Test
    void decimalsAsToPlainStringWritesThem()
    {
        long[] unscaled = {0, 1, 5, 9, 10, 12_345, -1, -70, 999_999_999_999_999_999L, -999_999_999_999_999_999L, Long.MAX_VALUE, Long.MIN_VALUE};
        for (long value : unscaled) {
            for (int scale = 0; scale <= 18; scale++) {
                int scaleOf = scale;
                assertThat(composed(writer -> writer.appendDecimal(value, scaleOf)))
                        .as("%d scale %d", value, scale)
                        .isEqualTo(BigDecimal.valueOf(value, scale).toPlainString() + "\n");
            }
        }
        assertThatThrownBy(() -> composed(writer -> writer.appendDecimal(1, 19))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> composed(writer -> writer.appendDecimal(1, -1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Property(tries = 2000)
    void decimalsOfAnyLongAndScaleAsToPlainString(@ForAll long unscaled, @ForAll @IntRange(max = 18) int scale)
    {
        assertThat(composed(writer -> writer.appendDecimal(unscaled, scale))).isEqualTo(BigDecimal.valueOf(unscaled, scale).toPlainString() + "\n");
    }

    private static String composed(Consumer<CsvWriter> field)
    {
        return write(CopyFormat.DEFAULT, writer -> {
            writer.beginField();
            field.accept(writer);
            writer.endField();
        });
    }

    @Test
    void misuseIsRefused()
    {
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, new CollectingChunkConsumer());
        assertThatThrownBy(() -> writer.appendAscii('x')).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(writer::endField).isInstanceOf(IllegalStateException.class);
        writer.beginField();
        assertThatThrownBy(writer::writeNull).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(writer::endRow).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> writer.appendAscii('é')).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> writer.appendAscii("a\0")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(writer::endArrayElement).isInstanceOf(IllegalStateException.class);
        writer.beginArrayElement();
        assertThatThrownBy(writer::endField).isInstanceOf(IllegalStateException.class);
        writer.discardRow();
        writer.writeNull();
        assertThatThrownBy(writer::finish).isInstanceOf(IllegalStateException.class).hasMessageContaining("Row not ended");
        assertThatThrownBy(() -> new CsvWriter(CopyFormat.DEFAULT, new CollectingChunkConsumer(), 0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void chunksAreWholeRowsAndConcatenateToTheWhole()
            throws SQLException
    {
        CollectingChunkConsumer whole = new CollectingChunkConsumer();
        CollectingChunkConsumer chunked = new CollectingChunkConsumer();
        CsvWriter one = new CsvWriter(CopyFormat.DEFAULT, whole);
        CsvWriter many = new CsvWriter(CopyFormat.DEFAULT, chunked, 50);
        for (int row = 0; row < 200; row++) {
            for (CsvWriter writer : new CsvWriter[] {one, many}) {
                writer.writeLong(row);
                writer.writeText("row, number \"" + row + "\"\n" + "x".repeat(row % 17));
                writer.writeNull();
                writer.endRow();
            }
            assertThat(many.bytesWritten()).isEqualTo(one.bytesWritten());
        }
        one.finish();
        many.finish();
        assertThat(whole.chunks()).hasSize(1);
        assertThat(chunked.chunks()).hasSizeGreaterThan(50);
        assertThat(chunked.bytes()).isEqualTo(whole.bytes());
        List<byte[]> chunks = chunked.chunks();
        for (int i = 0; i < chunks.size(); i++) {
            byte[] chunk = chunks.get(i);
            assertThat(chunk[chunk.length - 1]).isEqualTo((byte) '\n');
            if (i < chunks.size() - 1) {
                // only finish() hands over less than a chunk
                assertThat(chunk.length).isGreaterThanOrEqualTo(50);
            }
        }
        assertThat(many.rowsWritten()).isEqualTo(200);
        assertThat(many.bytesWritten()).isEqualTo(whole.bytes().length);
    }

    @Test
    void chunkSizeOfOneHandsOverEveryRow()
            throws SQLException
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, output, 1);
        for (int row = 0; row < 5; row++) {
            writer.writeLong(row);
            writer.endRow();
            assertThat(output.chunks()).hasSize(row + 1);
        }
        writer.finish();
        assertThat(output.chunks()).hasSize(5);
        assertThat(output.text()).isEqualTo("0\n1\n2\n3\n4\n");
    }

    @Test
    void largeRowsGrowTheBufferAndAreNeverSplit()
            throws SQLException
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, output, 1024);
        String big = "€,".repeat(3_000_000);
        writer.writeText("small");
        writer.endRow();
        writer.writeText(big);
        writer.endRow();
        writer.writeText("after");
        writer.endRow();
        writer.finish();
        String expected = "small\n\"" + big + "\"\nafter\n";
        assertThat(output.text()).isEqualTo(expected);
        assertThat(output.chunks()).hasSize(2);
        assertThat(output.chunks().get(1).length).isEqualTo("after\n".length());
    }

    @Test
    void discardRowDropsHalfWrittenRow()
            throws SQLException
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, output, 8);
        writer.writeText("first row");
        writer.endRow();
        assertThat(output.chunks()).hasSize(1);
        writer.writeText("half");
        writer.writeLong(42);
        writer.beginField();
        writer.appendAscii("{1,");
        writer.beginArrayElement();
        assertThatThrownBy(() -> writer.appendText("bad\0")).isInstanceOf(ValueEncodingException.class);
        writer.discardRow();
        writer.writeText("third");
        writer.writeText("row");
        writer.endRow();
        writer.discardRow();
        writer.finish();
        assertThat(output.text()).isEqualTo("first row\nthird,row\n");
        assertThat(writer.rowsWritten()).isEqualTo(2);
        assertThat(writer.bytesWritten()).isEqualTo(output.bytes().length);
    }

    @Test
    void rowOfCopyLineCountsLineFeedsInValuesAfterTheFirstRow()
            throws SQLException
    {
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, new CollectingChunkConsumer());
        writer.writeText("a\nb");
        writer.endRow();
        writer.writeText("c\r");
        writer.endRow();
        writer.writeText("d\n\ne");
        writer.endRow();
        writer.writeText("not\nended");
        writer.discardRow();
        writer.beginField();
        writer.appendText("x\r\ny");
        writer.endField();
        writer.endRow();
        writer.writeText("z");
        writer.endRow();
        // server lines: row 1 is line 1 (its line feed is not counted), row 2 line 2, row 3 lines 3-5, row 4 lines 6-7, row 5 line 8
        long[] rowOfLine = {0, 1, 2, 3, 3, 3, 4, 4, 5, 6};
        for (int line = 1; line < rowOfLine.length; line++) {
            assertThat(writer.rowOfCopyLine(line)).as("line %s", line).isEqualTo(rowOfLine[line]);
        }
        assertThatThrownBy(() -> writer.rowOfCopyLine(0)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void formatsThatCouldStartARowWithEndOfDataMarkerAreInvalid()
    {
        // PostgreSQL silently ignores the rows after a line "\." (checked against PostgreSQL 15);
        // the writer quotes values starting with a backslash, the format must do the rest
        assertThat(CopyFormat.problems('\\', '"', '"', "")).containsExactly("delimiter must not be a backslash: a row starting with \\. would end the COPY data");
        assertThat(CopyFormat.problems(',', '\\', '"', "")).containsExactly("quote must not be a backslash: a row starting with \\. would end the COPY data");
        assertThat(CopyFormat.problems(',', '"', '"', "\\.")).containsExactly("the NULL string must not be \\.: it is the end-of-data marker");
        assertThat(CopyFormat.problems(',', '"', '\\', "\\N")).isEmpty();
        assertThat(CopyFormat.problems('.', '"', '"', "\\")).isEmpty();
        // with NULL "\" and delimiter ".", an empty string after a NULL would make "\." a whole line: it is quoted
        assertThat(write(new CopyFormat('.', '"', '"', "\\", NulCharacterHandling.FAIL), writer -> {
            writer.writeNull();
            writer.writeText("");
        })).isEqualTo("\\.\"\"\n");
    }

    @Test
    void consumerFailurePropagates()
    {
        CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, (buffer, offset, length) -> {
            throw new SQLException("connection lost", "08006");
        }, 1);
        writer.writeLong(1);
        assertThatThrownBy(writer::endRow).isInstanceOf(SQLException.class).hasMessage("connection lost");
    }

    /** A writer that hands over every row, and the last row it handed over. */
    private static final class LastRow
            implements ChunkConsumer
    {
        final CsvWriter writer = new CsvWriter(CopyFormat.DEFAULT, this, 1);
        private String row;

        @Override
        public void accept(byte[] buffer, int offset, int length)
        {
            row = new String(buffer, offset, length, StandardCharsets.UTF_8);
        }

        /** Ends the row and returns it without its line feed. */
        String end()
        {
            try {
                writer.endRow();
            }
            catch (SQLException e) {
                throw new AssertionError(e);
            }
            assertThat(row).endsWith("\n");
            return row.substring(0, row.length() - 1);
        }
    }

    private static String text(CopyFormat format, String value)
    {
        return write(format, writer -> writer.writeText(value));
    }

    private static String write(CopyFormat format, Consumer<CsvWriter> row)
    {
        return new String(writeBytes(format, row), StandardCharsets.UTF_8);
    }

    private static byte[] writeBytes(CopyFormat format, Consumer<CsvWriter> row)
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(format, output);
        row.accept(writer);
        try {
            writer.endRow();
            writer.finish();
        }
        catch (SQLException e) {
            throw new AssertionError(e);
        }
        return output.bytes();
    }
}
