package io.pgsink.copy.write;

import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.Arrays;

import static java.util.Objects.requireNonNull;

/**
 * Encodes rows as the CSV that {@code COPY ... FROM STDIN (FORMAT csv)} reads, straight into UTF-8
 * bytes in one reusable buffer, and hands the buffer to a {@link ChunkConsumer} in chunks of whole
 * rows.
 *
 * <p>Quoting follows what PostgreSQL's CSV reader needs, for any valid {@link CopyFormat}. A field
 * is written quoted when it contains the delimiter, the quote, the escape, CR or LF; when it is
 * empty (only an unquoted field can be NULL, so {@code ""} stays an empty string whatever the NULL
 * string is); when it equals the NULL string; or when it starts with a backslash, because a line
 * starting with {@code \.} is the end-of-data marker and PostgreSQL silently drops every row after
 * it. Inside quotes, quote and escape characters are preceded by the escape character. Numbers,
 * dates and other ASCII values go through the same rules, since a format may use {@code .},
 * {@code -} or {@code :} as delimiter or escape.
 *
 * <p>Usage: per row, one {@code write...} call per column (each writes the delimiter before every
 * field but the first), or {@link #beginField()}, {@code append...} pieces and {@link #endField()}
 * for values composed of pieces such as array literals; then {@link #endRow()}. After the last row,
 * {@link #finish()}.
 *
 * <p>Errors: a value that cannot be encoded throws {@link ValueEncodingException} (reason only,
 * never the value) and leaves the row incomplete; {@link #discardRow()} drops it and the stream
 * stays well-formed. When PostgreSQL rejects a row it names a COPY line, which is not the row
 * number once values hold line feeds: {@link #rowOfCopyLine(long)} translates.
 *
 * <p>Memory: the writer encodes into a {@link CopyBuffer}, which it shares with
 * {@link BinaryCopyWriter}: the buffer is handed over when a row ends and the buffer holds at least
 * the chunk size, never in the middle of a row. So it holds at most a chunk plus the largest row,
 * and {@link #discardRow()} can always drop a half-written row. The buffer shrinks back after an
 * unusually large row.
 *
 * <p>Size: this class is over the house limit of about 400 lines on purpose. It is one job, the
 * encoder every COPY byte goes through, and its hot loops stay in one class so that the JIT inlines
 * them into one another with the quoting table as fields, and the buffer and position as the
 * {@link CopyBuffer}'s fields, rather than passed around: {@link #writeText} and
 * {@link #appendText} each scan a value once for its UTF-8 length and the characters that force
 * quoting (the two scans differ in what they count: a field's quotes and line feeds, or an array
 * element's), then copy it. A shared scan would have to hand back
 * several counts per value (an object per value, or a second pass over it) on the hottest path of
 * the sink, which is why the two loops look alike; {@code BenchmarkCsvWriter} measures them.
 *
 * <p>Not thread-safe: a writer belongs to the thread running one COPY.
 */
public final class CsvWriter
        implements CopyRowWriter
{
    public static final int DEFAULT_CHUNK_BYTES = 64 * 1024;

    private static final byte[] NAN = ascii("NaN");
    private static final byte[] INFINITY = ascii("Infinity");
    private static final byte[] NEGATIVE_INFINITY = ascii("-Infinity");
    private static final byte[] ARRAY_NULL = ascii("NULL");
    private static final byte[] MIN_LONG = ascii(Long.toString(Long.MIN_VALUE));
    private static final byte[] HEX = ascii("0123456789abcdef");
    /** 10^0 to 10^18. */
    private static final long[] POWERS_OF_TEN = powersOfTen();
    /**
     * Bytes that make PostgreSQL's array_in need the element quoted: braces, delimiters (box uses ';'), quote,
     * backslash, whitespace.
     */
    private static final boolean[] ARRAY_SPECIAL = new boolean[128];

    static {
        for (char c : "{},;\"\\ \t\n\r\u000B\f".toCharArray()) {
            ARRAY_SPECIAL[c] = true;
        }
    }

    private final CopyFormat format;
    private final CopyBuffer out;
    private final byte delimiter;
    private final byte quote;
    private final byte escape;
    private final byte[] nullBytes;
    private final String nullString;
    private final boolean stripNul;
    /** ASCII characters that force quoting: delimiter, quote, escape, CR, LF. */
    private final boolean[] special = new boolean[128];

    private int fieldsInRow;
    private boolean inField;
    private int fieldStart;
    private int elementStart = -1;
    private long rows;
    /** Line feeds inside the values of the current row. */
    private int rowLineFeeds;
    /** Line feeds inside values of the rows ended so far, not counting the first row. */
    private long lineFeeds;
    /**
     * The rows (1-based) after the first that hold line feeds, and {@link #lineFeeds} after each: sparse, since most
     * rows hold none.
     */
    private long[] multiLineRows = new long[0];
    private long[] lineFeedsAfterRow = new long[0];
    private int multiLineRowCount;

    public CsvWriter(CopyFormat format, ChunkConsumer output)
    {
        this(format, output, DEFAULT_CHUNK_BYTES);
    }

    /**
     * @param chunkBytes the buffer is handed to {@code output} when a row ends and it holds at least
     *        this many bytes
     */
    public CsvWriter(CopyFormat format, ChunkConsumer output, int chunkBytes)
    {
        this.format = requireNonNull(format, "format is null");
        this.out = new CopyBuffer(output, chunkBytes, new byte[0]);
        this.delimiter = (byte) format.delimiter();
        this.quote = (byte) format.quote();
        this.escape = (byte) format.escape();
        this.nullString = format.nullString();
        this.nullBytes = nullString.getBytes(StandardCharsets.UTF_8);
        this.stripNul = format.nulHandling() == NulCharacterHandling.STRIP;
        special[format.delimiter()] = true;
        special[format.quote()] = true;
        special[format.escape()] = true;
        special['\r'] = true;
        special['\n'] = true;
    }

    public CopyFormat format()
    {
        return format;
    }

    /** Writes SQL NULL: the format's NULL string, unquoted. */
    @Override
    public void writeNull()
    {
        startField(nullBytes.length);
        out.append(nullBytes);
    }

    public void writeLong(long value)
    {
        beginField();
        appendLong(value);
        endField();
    }

    /** Writes {@code t} or {@code f}. */
    @Override
    public void writeBoolean(boolean value)
    {
        beginField();
        appendAscii(value ? 't' : 'f');
        endField();
    }

    /**
     * Writes a float8 value so that it parses back to exactly the same double:
     * {@code NaN}, {@code Infinity}, {@code -Infinity}, or {@link Double#toString(double)}, whose
     * exponent form PostgreSQL accepts.
     */
    public void writeDouble(double value)
    {
        beginField();
        appendDouble(value);
        endField();
    }

    /** Writes a float4 value; see {@link #writeDouble(double)}. */
    public void writeFloat(float value)
    {
        beginField();
        appendFloat(value);
        endField();
    }

    /**
     * Writes a text value, quoted where needed. One pass over the characters decides on quoting,
     * validates and measures the UTF-8 length; a second encodes straight into the buffer.
     *
     * @throws ValueEncodingException for a NUL character (unless the format strips them) or an
     *         unpaired surrogate; nothing is written then
     */
    @Override
    public void writeText(CharSequence value)
    {
        requireNonNull(value, "value is null");
        checkNotInField();
        int length = value.length();
        // long: three bytes per char can exceed an int; ensureCapacity refuses rows over 2 GiB
        long utf8Length = 0;
        int escapes = 0;
        int valueLineFeeds = 0;
        boolean hasSpecial = false;
        boolean hasNul = false;
        int first = -1;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c == 0) {
                    if (!stripNul) {
                        throw nulCharacter(i);
                    }
                    hasNul = true;
                    continue;
                }
                if (special[c]) {
                    hasSpecial = true;
                    if (c == quote || c == escape) {
                        escapes++;
                    }
                    else if (c == '\n') {
                        valueLineFeeds++;
                    }
                }
                utf8Length++;
            }
            else {
                int width = nonAsciiUtf8Width(value, i, c);
                utf8Length += width;
                if (width == 4) {
                    i++;
                }
            }
            if (first < 0) {
                first = c;
            }
        }
        boolean quoted = hasSpecial
                || utf8Length == 0
                || first == '\\'
                || (utf8Length == nullBytes.length && equalsNullString(value, hasNul));

        startField(utf8Length + escapes + 2);
        rowLineFeeds += valueLineFeeds;
        byte[] buffer = out.bytes;
        int position = out.position;
        if (quoted) {
            buffer[position++] = quote;
        }
        boolean escaping = escapes > 0;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c == 0) {
                    continue;
                }
                if (escaping && (c == quote || c == escape)) {
                    buffer[position++] = escape;
                }
                buffer[position++] = (byte) c;
            }
            else {
                position = encodeMultiByte(value, i, c, buffer, position);
                if (Character.isHighSurrogate(c)) {
                    i++;
                }
            }
        }
        if (quoted) {
            buffer[position++] = quote;
        }
        out.position = position;
    }

    /**
     * Writes a field of ASCII text that an encoder formatted itself (a date, an identifier...),
     * quoted by the same rules as every field.
     */
    public void writeAscii(CharSequence value)
    {
        requireNonNull(value, "value is null");
        beginField();
        appendAscii(value);
        endField();
    }

    public void writeBytea(byte[] value)
    {
        requireNonNull(value, "value is null");
        writeBytea(value, 0, value.length);
    }

    /** Writes bytea in hex format, {@code \x} and two lowercase digits per byte. */
    public void writeBytea(byte[] value, int offset, int length)
    {
        requireNonNull(value, "value is null");
        beginField();
        appendBytea(value, offset, length);
        endField();
    }

    /** Writes the bytes between the buffer's position and limit, without moving its position. */
    public void writeBytea(ByteBuffer value)
    {
        requireNonNull(value, "value is null");
        beginField();
        appendBytea(value);
        endField();
    }

    /**
     * Starts a field composed of {@code append...} pieces: they are written raw, as the value's
     * PostgreSQL text form, and {@link #endField()} applies the CSV quoting rules to the whole.
     */
    public void beginField()
    {
        checkNotInField();
        startField(0);
        inField = true;
        fieldStart = out.position;
    }

    /**
     * Ends a composed field: quotes it, in place, when the rules require.
     */
    public void endField()
    {
        if (!inField) {
            throw new IllegalStateException("No field started");
        }
        if (elementStart >= 0) {
            throw new IllegalStateException("Array element not ended");
        }
        inField = false;
        byte[] buffer = out.bytes;
        int start = fieldStart;
        int end = out.position;
        boolean quoted = end == start || buffer[start] == '\\';
        int escapes = 0;
        for (int i = start; i < end; i++) {
            byte b = buffer[i];
            if (b >= 0 && special[b]) {
                quoted = true;
                if (b == quote || b == escape) {
                    escapes++;
                }
                else if (b == '\n') {
                    rowLineFeeds++;
                }
            }
        }
        if (!quoted && end - start == nullBytes.length
                && Arrays.equals(buffer, start, end, nullBytes, 0, nullBytes.length)) {
            quoted = true;
        }
        if (quoted) {
            quoteInPlace(start, end, escapes, quote, escape);
        }
    }

    /** Appends one ASCII character to the field being composed. */
    public void appendAscii(char c)
    {
        checkInField();
        if (c == 0 || c >= 0x80) {
            throw new IllegalArgumentException(String.format("Not a non-NUL ASCII character: U+%04X", (int) c));
        }
        out.ensureRoom(1);
        out.bytes[out.position++] = (byte) c;
    }

    /** Appends ASCII text (no NUL) to the field being composed. */
    public void appendAscii(CharSequence value)
    {
        checkInField();
        int length = value.length();
        out.ensureRoom(length);
        byte[] buffer = out.bytes;
        int position = out.position;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c == 0 || c >= 0x80) {
                throw new IllegalArgumentException(String.format("Not a non-NUL ASCII character: U+%04X", (int) c));
            }
            buffer[position++] = (byte) c;
        }
        out.position = position;
    }

    /**
     * Appends text as UTF-8 to the field being composed, with the NUL and surrogate rules of
     * {@link #writeText(CharSequence)}.
     */
    public void appendText(CharSequence value)
    {
        checkInField();
        int length = value.length();
        long utf8Length = 0;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c == 0 && !stripNul) {
                    throw nulCharacter(i);
                }
                utf8Length++;
            }
            else {
                int width = nonAsciiUtf8Width(value, i, c);
                utf8Length += width;
                if (width == 4) {
                    i++;
                }
            }
        }
        out.ensureRoom(utf8Length);
        byte[] buffer = out.bytes;
        int position = out.position;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c != 0) {
                    buffer[position++] = (byte) c;
                }
            }
            else {
                position = encodeMultiByte(value, i, c, buffer, position);
                if (Character.isHighSurrogate(c)) {
                    i++;
                }
            }
        }
        out.position = position;
    }

    /** Appends the decimal digits of {@code value}, without allocating. */
    public void appendLong(long value)
    {
        checkInField();
        out.ensureRoom(20);
        if (value == Long.MIN_VALUE) {
            System.arraycopy(MIN_LONG, 0, out.bytes, out.position, MIN_LONG.length);
            out.position += MIN_LONG.length;
            return;
        }
        if (value < 0) {
            out.bytes[out.position++] = '-';
            value = -value;
        }
        writeDigits(value, digitCount(value));
    }

    /**
     * Appends {@code unscaled × 10^-scale} in plain notation, the text
     * {@link java.math.BigDecimal#toPlainString()} gives for that unscaled value and scale
     * ({@code 12345, 2} is {@code 123.45}, {@code 5, 3} is {@code 0.005}, {@code -70, 1} is
     * {@code -7.0}), without allocating.
     *
     * @param scale 0 to 18
     */
    public void appendDecimal(long unscaled, int scale)
    {
        checkInField();
        if (scale < 0 || scale >= POWERS_OF_TEN.length) {
            throw new IllegalArgumentException("scale is not 0 to " + (POWERS_OF_TEN.length - 1) + ": " + scale);
        }
        if (scale == 0) {
            appendLong(unscaled);
            return;
        }
        if (unscaled == Long.MIN_VALUE) {
            appendAscii(java.math.BigDecimal.valueOf(unscaled, scale).toPlainString());
            return;
        }
        // sign, at most 19 integer digits, the point and the fraction
        out.ensureRoom(21L + scale);
        if (unscaled < 0) {
            out.bytes[out.position++] = '-';
            unscaled = -unscaled;
        }
        long divisor = POWERS_OF_TEN[scale];
        long integer = unscaled / divisor;
        writeDigits(integer, digitCount(integer));
        out.bytes[out.position++] = '.';
        writeDigits(unscaled - integer * divisor, scale);
    }

    /** Appends a non-negative {@code value} zero-padded to at least {@code width} digits. */
    public void appendDigits(long value, int width)
    {
        checkInField();
        if (value < 0) {
            throw new IllegalArgumentException("value is negative: " + value);
        }
        int digits = Math.max(digitCount(value), width);
        out.ensureRoom(digits);
        writeDigits(value, digits);
    }

    /** Appends the low {@code digits} hexadecimal digits of {@code value}, lowercase. */
    public void appendHex(long value, int digits)
    {
        checkInField();
        if (digits < 1 || digits > 16) {
            throw new IllegalArgumentException("digits must be between 1 and 16, got " + digits);
        }
        out.ensureRoom(digits);
        byte[] buffer = out.bytes;
        int position = out.position;
        for (int i = digits - 1; i >= 0; i--) {
            buffer[position + i] = HEX[(int) (value & 0xF)];
            value >>>= 4;
        }
        out.position += digits;
    }

    public void appendDouble(double value)
    {
        checkInField();
        if (Double.isNaN(value)) {
            appendBytes(NAN);
        }
        else if (Double.isInfinite(value)) {
            appendBytes(value > 0 ? INFINITY : NEGATIVE_INFINITY);
        }
        else {
            appendAscii(Double.toString(value));
        }
    }

    public void appendFloat(float value)
    {
        checkInField();
        if (Float.isNaN(value)) {
            appendBytes(NAN);
        }
        else if (Float.isInfinite(value)) {
            appendBytes(value > 0 ? INFINITY : NEGATIVE_INFINITY);
        }
        else {
            appendAscii(Float.toString(value));
        }
    }

    /** Appends bytea in hex format: {@code \x} and two lowercase digits per byte. */
    public void appendBytea(byte[] value, int offset, int length)
    {
        checkInField();
        requireNonNull(value, "value is null");
        if (offset < 0 || length < 0 || offset > value.length - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " and length " + length + " do not fit in "
                    + value.length + " bytes");
        }
        out.ensureRoom(2 + 2L * length);
        byte[] buffer = out.bytes;
        int position = out.position;
        buffer[position++] = '\\';
        buffer[position++] = 'x';
        for (int i = offset; i < offset + length; i++) {
            int b = value[i];
            buffer[position++] = HEX[(b >> 4) & 0xF];
            buffer[position++] = HEX[b & 0xF];
        }
        out.position = position;
    }

    /** Appends the bytes between the buffer's position and limit as bytea, without moving its position. */
    public void appendBytea(ByteBuffer value)
    {
        checkInField();
        if (value.hasArray()) {
            appendBytea(value.array(), value.arrayOffset() + value.position(), value.remaining());
            return;
        }
        int length = value.remaining();
        out.ensureRoom(2 + 2L * length);
        byte[] buffer = out.bytes;
        int position = out.position;
        buffer[position++] = '\\';
        buffer[position++] = 'x';
        for (int i = value.position(); i < value.limit(); i++) {
            int b = value.get(i);
            buffer[position++] = HEX[(b >> 4) & 0xF];
            buffer[position++] = HEX[b & 0xF];
        }
        out.position = position;
    }

    /**
     * Starts one element of an array literal being composed in the current field. Its text is
     * appended raw; {@link #endArrayElement()} quotes it the way {@code array_in} needs. NULL
     * elements, braces and the delimiters between elements are appended directly instead.
     */
    public void beginArrayElement()
    {
        checkInField();
        if (elementStart >= 0) {
            throw new IllegalStateException("Array element already started");
        }
        elementStart = out.position;
    }

    /**
     * Ends an array element: quotes it in place when it is empty, equals {@code NULL} ignoring
     * case, or contains braces, a delimiter, a quote, a backslash or whitespace. Inside, quotes and
     * backslashes are backslash-escaped.
     */
    public void endArrayElement()
    {
        int start = elementStart;
        if (start < 0) {
            throw new IllegalStateException("No array element started");
        }
        elementStart = -1;
        byte[] buffer = out.bytes;
        int end = out.position;
        boolean quoted = end == start;
        int escapes = 0;
        for (int i = start; i < end; i++) {
            byte b = buffer[i];
            if (b >= 0 && ARRAY_SPECIAL[b]) {
                quoted = true;
                if (b == '"' || b == '\\') {
                    escapes++;
                }
            }
        }
        if (!quoted && end - start == 4
                && (buffer[start] | 0x20) == 'n' && (buffer[start + 1] | 0x20) == 'u'
                && (buffer[start + 2] | 0x20) == 'l' && (buffer[start + 3] | 0x20) == 'l') {
            quoted = true;
        }
        if (quoted) {
            quoteInPlace(start, end, escapes, (byte) '"', (byte) '\\');
        }
    }

    /** Appends a NULL element ({@code NULL}, unquoted) to an array literal being composed. */
    public void appendArrayNull()
    {
        appendBytes(ARRAY_NULL);
    }

    /**
     * Ends the row. When the buffer then holds at least the chunk size, it is handed to the
     * {@link ChunkConsumer}.
     */
    @Override
    public void endRow()
            throws SQLException
    {
        checkNotInField();
        out.ensureRoom(1);
        out.bytes[out.position++] = '\n';
        // PostgreSQL counts line feeds inside quoted values in its COPY line numbers, except in
        // the first row (it learns the line ending style only at the end of that row)
        if (rowLineFeeds > 0 && rows > 0) {
            lineFeeds += rowLineFeeds;
            recordMultiLineRow(rows + 1, lineFeeds);
        }
        rowLineFeeds = 0;
        rows++;
        fieldsInRow = 0;
        out.endRow();
    }

    /**
     * Drops what was written of the current row, e.g. after a {@link ValueEncodingException}, so
     * that the stream stays well-formed. The row is always still in the buffer: chunks are only
     * handed over at row boundaries.
     */
    @Override
    public void discardRow()
    {
        out.discardRow();
        fieldsInRow = 0;
        rowLineFeeds = 0;
        inField = false;
        elementStart = -1;
    }

    /** Hands over the rows still buffered. The current row must have been ended or discarded. */
    @Override
    public void finish()
            throws SQLException
    {
        checkNotInField();
        if (fieldsInRow != 0) {
            throw new IllegalStateException("Row not ended: call endRow() or discardRow() before finish()");
        }
        out.flush();
    }

    /** Bytes of the rows ended so far, handed over or still buffered. */
    public long bytesWritten()
    {
        return out.bytesWritten();
    }

    /** Rows ended so far (discarded rows do not count). */
    public long rowsWritten()
    {
        return rows;
    }

    /**
     * Returns the row that PostgreSQL calls {@code line} in a COPY error context
     * ({@code COPY t, line 7, column c}). They differ when values hold line feeds: PostgreSQL counts
     * the line feeds inside quoted values in its line numbers, except in the first row.
     *
     * @return the 1-based number of the row, counting the rows ended by this writer in order
     *         (discarded rows do not count)
     */
    @Override
    public long rowOfCopyLine(long line)
    {
        if (line < 1) {
            throw new IllegalArgumentException("COPY lines start at 1, got " + line);
        }
        long previousLineFeeds = 0;
        for (int i = 0; i < multiLineRowCount; i++) {
            long row = multiLineRows[i];
            // the rows before this one span one line each
            if (line <= row - 1 + previousLineFeeds) {
                return line - previousLineFeeds;
            }
            // this row spans its own line and its line feeds; PostgreSQL names its last line
            if (line <= row + lineFeedsAfterRow[i]) {
                return row;
            }
            previousLineFeeds = lineFeedsAfterRow[i];
        }
        return line - previousLineFeeds;
    }

    private void recordMultiLineRow(long row, long lineFeedsAfter)
    {
        if (multiLineRowCount == multiLineRows.length) {
            int length = Math.max(16, multiLineRowCount * 2);
            multiLineRows = Arrays.copyOf(multiLineRows, length);
            lineFeedsAfterRow = Arrays.copyOf(lineFeedsAfterRow, length);
        }
        multiLineRows[multiLineRowCount] = row;
        lineFeedsAfterRow[multiLineRowCount] = lineFeedsAfter;
        multiLineRowCount++;
    }

    /** Writes the delimiter unless this is the first field of the row, and makes room for {@code bytes} more. */
    private void startField(long bytes)
    {
        checkNotInField();
        out.ensureRoom(1 + bytes);
        if (fieldsInRow > 0) {
            out.bytes[out.position++] = delimiter;
        }
        fieldsInRow++;
    }

    /**
     * Encloses buffer[start, end) in {@code quoteByte} and puts {@code escapeByte} before every
     * quote or escape byte inside, working backwards so that no byte is overwritten before it has
     * been moved.
     */
    private void quoteInPlace(int start, int end, int escapes, byte quoteByte, byte escapeByte)
    {
        int newEnd = end + 2 + escapes;
        // end is the position: both callers quote what they have just written
        out.ensureRoom(2L + escapes);
        byte[] buffer = out.bytes;
        if (escapes == 0) {
            System.arraycopy(buffer, start, buffer, start + 1, end - start);
        }
        else {
            int write = newEnd - 1;
            for (int read = end - 1; read >= start; read--) {
                byte b = buffer[read];
                buffer[--write] = b;
                if (b == quoteByte || b == escapeByte) {
                    buffer[--write] = escapeByte;
                }
            }
        }
        buffer[start] = quoteByte;
        buffer[newEnd - 1] = quoteByte;
        out.position = newEnd;
    }

    private boolean equalsNullString(CharSequence value, boolean skipNul)
    {
        String nullString = this.nullString;
        int length = value.length();
        int j = 0;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c == 0 && skipNul) {
                continue;
            }
            if (j >= nullString.length() || nullString.charAt(j) != c) {
                return false;
            }
            j++;
        }
        return j == nullString.length();
    }

    /** Encodes a non-ASCII char (with its low surrogate when it is a high one) and returns the new position. */
    private static int encodeMultiByte(CharSequence value, int index, char c, byte[] buffer, int position)
    {
        if (c < 0x800) {
            buffer[position++] = (byte) (0xC0 | (c >> 6));
            buffer[position++] = (byte) (0x80 | (c & 0x3F));
        }
        else if (Character.isHighSurrogate(c)) {
            int codePoint = Character.toCodePoint(c, value.charAt(index + 1));
            buffer[position++] = (byte) (0xF0 | (codePoint >> 18));
            buffer[position++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
            buffer[position++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
            buffer[position++] = (byte) (0x80 | (codePoint & 0x3F));
        }
        else {
            buffer[position++] = (byte) (0xE0 | (c >> 12));
            buffer[position++] = (byte) (0x80 | ((c >> 6) & 0x3F));
            buffer[position++] = (byte) (0x80 | (c & 0x3F));
        }
        return position;
    }

    private void appendBytes(byte[] bytes)
    {
        checkInField();
        out.append(bytes);
    }

    /** Writes the non-negative {@code value} right-aligned in {@code digits} positions, zero-padded. */
    private void writeDigits(long value, int digits)
    {
        byte[] buffer = out.bytes;
        int start = out.position;
        int end = start + digits;
        for (int i = end - 1; i >= start; i--) {
            long quotient = value / 10;
            buffer[i] = (byte) ('0' + (value - quotient * 10));
            value = quotient;
        }
        out.position = end;
    }

    private static long[] powersOfTen()
    {
        long[] powers = new long[19];
        powers[0] = 1;
        for (int i = 1; i < powers.length; i++) {
            powers[i] = powers[i - 1] * 10;
        }
        return powers;
    }

    private static int digitCount(long value)
    {
        long bound = 10;
        for (int digits = 1; digits < 19; digits++) {
            if (value < bound) {
                return digits;
            }
            bound *= 10;
        }
        return 19;
    }

    private void checkInField()
    {
        if (!inField) {
            throw new IllegalStateException("append called outside beginField()/endField()");
        }
    }

    private void checkNotInField()
    {
        if (inField) {
            throw new IllegalStateException("Field not ended: call endField() first");
        }
    }

    static ValueEncodingException nulCharacter(int index)
    {
        return new ValueEncodingException("text value contains a NUL character (U+0000) at position " + (index + 1)
                + "; PostgreSQL cannot store it in text (the copy format can strip it)");
    }

    /** UTF-8 bytes of the non-ASCII char at {@code i}: 2, 3, or 4 for a surrogate pair (which takes two chars). */
    private static int nonAsciiUtf8Width(CharSequence value, int i, char c)
    {
        if (c < 0x800) {
            return 2;
        }
        if (!Character.isSurrogate(c)) {
            return 3;
        }
        if (!Character.isHighSurrogate(c) || i + 1 >= value.length()
                || !Character.isLowSurrogate(value.charAt(i + 1))) {
            throw unpairedSurrogate(c, i);
        }
        return 4;
    }

    static ValueEncodingException unpairedSurrogate(char c, int index)
    {
        return new ValueEncodingException(String.format("text value contains an unpaired surrogate U+%04X at position "
                + "%d, which UTF-8 cannot encode", (int) c, index + 1));
    }

    private static byte[] ascii(String value)
    {
        return value.getBytes(StandardCharsets.US_ASCII);
    }
}
