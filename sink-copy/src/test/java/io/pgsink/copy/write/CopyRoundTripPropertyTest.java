package io.pgsink.copy.write;

import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.load.CopyBody;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.copy.testing.TestingCopies;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * CSV encoding round-trips through a real COPY: any rows of text (delimiters, quotes, backslashes,
 * {@code \.} on its own line, CR, LF, CRLF, unicode with surrogate pairs, the empty string, strings
 * equal to the NULL string) and NULLs, integers, doubles and text arrays, under any valid format,
 * come back from PostgreSQL identical. With NUL characters: stripped when the format says so,
 * otherwise the COPY fails and loads nothing.
 */
class CopyRoundTripPropertyTest
{
    /** Delimiter, quote and escape candidates: punctuation, blanks, and characters of numbers and array literals. */
    private static final List<Character> FORMAT_CHARACTERS = List.of(
            ',', ';', '|', ':', '#', '!', '~', '*', '.', '-', '_', '/', '$', '%', '&', '+', '=', '?', '@', '^', '`', '\'', '"', '\\',
            '{', '}', '\t', ' ', 'x', 'E', '1');

    private static final List<String> NULL_STRINGS = List.of("", "\\N", "NULL", "null", "x", "-", "\\", " ", "1", "E", "\\.x");

    private static TestingSchema schema;
    private static Connection connection;

    @BeforeContainer
    static void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("copy_property");
        connection = schema.connect();
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE round_trip (id int, a text, b text, n int8, f float8, arr text[])");
            // rows of one text field: the only way for a value to be a whole line, such as \.
            statement.execute("CREATE TABLE one_column (t text, id int GENERATED ALWAYS AS IDENTITY)");
        }
    }

    @AfterContainer
    static void tearDown()
            throws SQLException
    {
        try (Connection closing = connection) {
            assertThat(TestingCopies.activeCopies(closing)).isZero();
        }
        finally {
            schema.close();
        }
    }

    @Property(tries = 200)
    void rowsComeBackIdentical(@ForAll("formats") CopyFormat format, @ForAll("rows") List<Row> rows)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("TRUNCATE round_trip");
            statement.execute("TRUNCATE one_column RESTART IDENTITY");
        }
        String copy = CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "round_trip"), List.of("a", "id", "b", "n", "f", "arr"), format);
        CopyBody body = writer -> {
            for (int id = 0; id < rows.size(); id++) {
                Row row = rows.get(id);
                // a text column first: what starts a line matters (a line starting with \. ends the data)
                writeText(writer, row.a());
                writer.writeLong(id);
                writeText(writer, row.b());
                if (row.n() == null) {
                    writer.writeNull();
                }
                else {
                    writer.writeLong(row.n());
                }
                writer.writeDouble(row.f());
                if (row.arr() == null) {
                    writer.writeNull();
                }
                else {
                    ValueEncoders.forType("_text").encode(row.arr(), writer);
                }
                writer.endRow();
            }
        };

        boolean hasNul = rows.stream().anyMatch(Row::hasNul);
        if (hasNul && format.nulHandling() == NulCharacterHandling.FAIL) {
            assertThatThrownBy(() -> CopyLoader.copyIn(connection, copy, format, body))
                    .isInstanceOf(ValueEncodingException.class)
                    .hasMessageContaining("NUL character (U+0000)")
                    .satisfies(e -> assertThat(e.getSuppressed()).isEmpty());
            assertThat(readBack()).isEmpty();
            return;
        }
        assertThat(CopyLoader.copyIn(connection, copy, format, body)).isEqualTo(rows.size());
        List<Row> expected = rows.stream().map(Row::withoutNul).toList();
        assertThat(readBack()).isEqualTo(expected);

        List<String> texts = new ArrayList<>();
        for (Row row : expected) {
            texts.add(row.a());
            texts.add(row.b());
        }
        String copyOneColumn = CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "one_column"), List.of("t"), format);
        long copied = CopyLoader.copyIn(connection, copyOneColumn, format, writer -> {
            for (String text : texts) {
                writeText(writer, text);
                writer.endRow();
            }
        });
        assertThat(copied).isEqualTo(texts.size());
        List<String> actual = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT t FROM one_column ORDER BY id")) {
            while (result.next()) {
                actual.add(result.getString(1));
            }
        }
        assertThat(actual).isEqualTo(texts);
    }

    private static void writeText(CsvWriter writer, @Nullable String value)
    {
        if (value == null) {
            writer.writeNull();
        }
        else {
            writer.writeText(value);
        }
    }

    private static List<Row> readBack()
            throws SQLException
    {
        Map<Integer, Row> rows = new LinkedHashMap<>();
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT id, a, b, n, f, arr IS NULL FROM round_trip ORDER BY id")) {
            while (result.next()) {
                long n = result.getLong(4);
                Long nullableN = result.wasNull() ? null : n;
                List<String> arr = result.getBoolean(6) ? null : new ArrayList<>();
                rows.put(result.getInt(1), new Row(result.getString(2), result.getString(3), nullableN, result.getDouble(5), arr));
            }
        }
        // elements one by one, as text, so that no client-side array parser is involved
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT id, element FROM round_trip, unnest(arr) WITH ORDINALITY AS u(element, position) ORDER BY id, position")) {
            while (result.next()) {
                Objects.requireNonNull(rows.get(result.getInt(1)).arr()).add(result.getString(2));
            }
        }
        return new ArrayList<>(rows.values());
    }

    @Provide
    Arbitrary<CopyFormat> formats()
    {
        Arbitrary<Character> characters = Arbitraries.of(FORMAT_CHARACTERS);
        Arbitrary<String> nullStrings = Arbitraries.of(NULL_STRINGS);
        Arbitrary<Boolean> escapeIsQuote = Arbitraries.of(true, false);
        return Combinators.combine(characters, characters, characters, escapeIsQuote, nullStrings, Arbitraries.of(NulCharacterHandling.class))
                .as((delimiter, quote, escape, same, nullString, nul) -> new FormatCandidate(delimiter, quote, same ? quote : escape, nullString, nul))
                .filter(FormatCandidate::isValid)
                .map(FormatCandidate::toFormat);
    }

    @Provide
    Arbitrary<List<Row>> rows()
    {
        Arbitrary<String> text = texts();
        Arbitrary<Double> doubles = Arbitraries.oneOf(
                Arbitraries.doubles(),
                Arbitraries.longs().map(Double::longBitsToDouble).filter(value -> !Double.isNaN(value)),
                Arbitraries.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0, Double.MIN_VALUE, Double.MAX_VALUE, 1e-5, 0.1));
        Arbitrary<List<String>> arrays = text.injectNull(0.2).list().ofMaxSize(4).injectNull(0.2);
        return Combinators.combine(text.injectNull(0.15), text.injectNull(0.15), Arbitraries.longs().injectNull(0.1), doubles, arrays)
                .as(Row::new)
                .list()
                .ofMaxSize(6);
    }

    private static Arbitrary<String> texts()
    {
        Arbitrary<String> format = Arbitraries.of(FORMAT_CHARACTERS).map(String::valueOf);
        Arbitrary<String> special = Arbitraries.of("\r", "\n", "\r\n", "\\.", "\n\\.\n", "\\.\r\n", "\"", "\\", "\\N", "NULL", "null", "x", "",
                "{", "}", ",", " ", "\t", "\u000B", "\f", "1.5", "-1");
        Arbitrary<String> unicode = Arbitraries.of("é", "€", "😀", "𝄞", "中", "\u0080", "\u07ff", "\u0800", "\uffff", "\uD83C\uDDEB\uD83C\uDDF7");
        Arbitrary<String> piece = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.strings().alpha().numeric().ofMaxLength(3)),
                net.jqwik.api.Tuple.of(6, format),
                net.jqwik.api.Tuple.of(6, special),
                net.jqwik.api.Tuple.of(3, unicode),
                net.jqwik.api.Tuple.of(1, Arbitraries.just("\0")));
        // whole values that are edge cases on their own: NULL strings, the end-of-data marker
        List<String> whole = new ArrayList<>(NULL_STRINGS);
        whole.addAll(List.of("\\.", "\\.\r", "\\.\n", "\\.\r\n", "NuLl", "\"\"", "\\\\"));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.of(whole)),
                net.jqwik.api.Tuple.of(10, piece.list().ofMaxSize(6).map(pieces -> String.join("", pieces))));
    }

    record Row(@Nullable String a, @Nullable String b, @Nullable Long n, double f, @Nullable List<String> arr)
    {
        boolean hasNul()
        {
            return hasNul(a) || hasNul(b) || (arr != null && arr.stream().anyMatch(Row::hasNul));
        }

        Row withoutNul()
        {
            List<String> strippedArr = null;
            if (arr != null) {
                strippedArr = new ArrayList<>();
                for (String element : arr) {
                    strippedArr.add(strip(element));
                }
            }
            return new Row(strip(a), strip(b), n, f, strippedArr);
        }

        @Override
        public boolean equals(Object other)
        {
            return other instanceof Row row
                    && Objects.equals(a, row.a)
                    && Objects.equals(b, row.b)
                    && Objects.equals(n, row.n)
                    // same bits: -0.0 differs from 0.0, NaN equals NaN
                    && Double.compare(f, row.f) == 0
                    && Objects.equals(arr, row.arr);
        }

        @Override
        public int hashCode()
        {
            return Objects.hash(a, b, n, Double.hashCode(f), arr);
        }

        private static boolean hasNul(@Nullable String value)
        {
            return value != null && value.indexOf('\0') >= 0;
        }

        @Nullable
        private static String strip(@Nullable String value)
        {
            return value == null ? null : value.replace("\0", "");
        }
    }

    private record FormatCandidate(char delimiter, char quote, char escape, String nullString, NulCharacterHandling nulHandling)
    {
        boolean isValid()
        {
            return CopyFormat.problems(delimiter, quote, escape, nullString).isEmpty();
        }

        CopyFormat toFormat()
        {
            return new CopyFormat(delimiter, quote, escape, nullString, nulHandling);
        }
    }
}
