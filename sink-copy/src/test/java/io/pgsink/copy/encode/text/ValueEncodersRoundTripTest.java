package io.pgsink.copy.encode.text;

import io.pgsink.copy.encode.binary.BinaryValueEncoder;
import io.pgsink.copy.encode.binary.BinaryValueEncoders;
import io.pgsink.copy.load.CopyListener;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.copy.testing.TestingCopies;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * Every supported type, edge values included, COPY'd into a real column of that type, must read
 * back as the expected {@code value::text}. Each case runs under three formats: the default, one
 * with a backslash escape and {@code \N} NULL, and one whose delimiter, quote and escape
 * ({@code - : .}) occur inside numbers, dates and times.
 */
@TestInstance(PER_CLASS)
class ValueEncodersRoundTripTest
{
    /** The column types of this test that have a binary form; the others are always written as CSV. */
    private static final Set<String> BINARY_TYPES = Set.of("int2", "int4", "int8", "oid", "float4", "float8", "numeric", "bool", "text", "varchar", "char",
            "json", "jsonb", "bytea", "date", "time", "timetz", "timestamp", "timestamptz", "uuid");

    private static final List<CopyFormat> FORMATS = List.of(
            CopyFormat.DEFAULT,
            new CopyFormat(';', '\'', '\\', "\\N", NulCharacterHandling.FAIL),
            new CopyFormat('-', ':', '.', "0", NulCharacterHandling.FAIL));

    private TestingSchema schema;
    private Connection connection;
    private int tables;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("copy_types");
        connection = schema.connect();
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET TimeZone = 'UTC'");
            statement.execute("SET DateStyle = 'ISO, MDY'");
            statement.execute("SET IntervalStyle = 'postgres'");
            statement.execute("SET extra_float_digits = 1");
            statement.execute("SET lc_monetary = 'C'");
            statement.execute("CREATE TYPE mood AS ENUM ('happy', 'sad', 'so so')");
        }
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        try (Connection closing = connection) {
            assertThat(TestingCopies.activeCopies(closing)).isZero();
        }
        finally {
            schema.close();
        }
    }

    @Test
    void integers()
            throws SQLException
    {
        assertRoundTrip("int2", Arrays.asList((short) -32768, (short) 32767, (byte) 0, 5, null), Arrays.asList("-32768", "32767", "0", "5", null));
        assertRoundTrip("int4", List.of(Integer.MIN_VALUE, Integer.MAX_VALUE, 0L, "-7"), List.of("-2147483648", "2147483647", "0", "-7"));
        assertRoundTrip("int8", List.of(Long.MIN_VALUE, Long.MAX_VALUE, BigInteger.valueOf(-1), 10), List.of("-9223372036854775808", "9223372036854775807", "-1", "10"));
        assertRoundTrip("oid", List.of(4294967295L, 0), List.of("4294967295", "0"));
    }

    @Test
    void floats()
            throws SQLException
    {
        assertRoundTrip("float4",
                List.of(1.1f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, -0.0f, Float.MIN_VALUE, Float.MAX_VALUE, 3, 0.1),
                List.of("1.1", "NaN", "Infinity", "-Infinity", "-0", "1e-45", "3.4028235e+38", "3", "0.1"));
        assertRoundTrip("float8",
                List.of(0.1, -0.0, Double.MIN_VALUE, Double.MAX_VALUE, Double.NaN, 1e-5, 123456789.125, 0.1f, 1e300, -2.5e-300, Double.NEGATIVE_INFINITY),
                List.of("0.1", "-0", "5e-324", "1.7976931348623157e+308", "NaN", "1e-05", "123456789.125", "0.1", "1e+300", "-2.5e-300", "-Infinity"));
    }

    @Test
    void numeric()
            throws SQLException
    {
        String huge = "9".repeat(1000) + "." + "0123456789".repeat(50) + "000";
        assertRoundTrip("numeric",
                List.of(new BigDecimal("1.500"), new BigDecimal("0.000000000000000000000000000001"), new BigDecimal("1E+30"), new BigDecimal(huge),
                        new BigDecimal("-0.5"), new BigDecimal("0E-10"), Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
                        BigInteger.TEN.pow(50), 42L, "NaN", 1.5, 0.1f),
                List.of("1.500", "0.000000000000000000000000000001", "1000000000000000000000000000000", huge,
                        "-0.5", "0.0000000000", "NaN", "Infinity", "-Infinity",
                        "1" + "0".repeat(50), "42", "NaN", "1.5", "0.1"));
        assertRoundTrip("numeric(10,3)", List.of(new BigDecimal("1.5")), List.of("1.500"));
    }

    @Test
    void booleanAndText()
            throws SQLException
    {
        assertRoundTrip("bool", List.of(true, false, "yes"), List.of("true", "false", "true"));
        List<Object> texts = List.of("", "plain", "a,b", "quote\"d", "it's", "line\nbreak", "cr\rlf\r\n", "\\.", "\\", "a\\b", "\\N", "NULL", "tab\t",
                " spaces ", "emoji 😀 and 𝄞", "中文", "0", "-", ":", ".", "a\n\\.\nb");
        List<String> expected = new ArrayList<>();
        texts.forEach(text -> expected.add((String) text));
        assertRoundTrip("text", texts, expected);
        assertRoundTrip("varchar(20)", List.of("ab", ""), List.of("ab", ""));
        assertRoundTrip("char(5)", List.of("ab"), List.of("ab"));
        assertRoundTrip("name", List.of("weird \"name\""), List.of("weird \"name\""));
        assertRoundTrip("json", List.of("{\"a\": [1, 2], \"b\": \"x,y\"}"), List.of("{\"a\": [1, 2], \"b\": \"x,y\"}"));
        assertRoundTrip("jsonb", List.of("{\"b\":1,  \"a\":\"x,y\\n\"}"), List.of("{\"a\": \"x,y\\n\", \"b\": 1}"));
        assertRoundTrip("xml", List.of("<a b=\"1\">x &amp; y</a>"), List.of("<a b=\"1\">x &amp; y</a>"));
        assertRoundTrip("mood", List.of("happy", "so so"), List.of("happy", "so so"));
    }

    @Test
    void bytea()
            throws SQLException
    {
        assertRoundTrip("bytea",
                List.of(new byte[] {0, 1, (byte) 0xff}, new byte[0], ByteBuffer.wrap(new byte[] {9, 10, 11}, 1, 2), "\\x0a0b", "abc"),
                List.of("\\x0001ff", "\\x", "\\x0a0b", "\\x0a0b", "\\x616263"));
    }

    @Test
    void datesAndTimes()
            throws SQLException
    {
        assertRoundTrip("date",
                List.of(LocalDate.of(2020, 2, 29), LocalDate.of(1, 1, 1), LocalDate.of(0, 1, 1), LocalDate.of(-4712, 1, 1), LocalDate.of(10000, 1, 1),
                        LocalDate.of(5874897, 12, 31), "infinity", "-infinity"),
                List.of("2020-02-29", "0001-01-01", "0001-01-01 BC", "4713-01-01 BC", "10000-01-01", "5874897-12-31", "infinity", "-infinity"));
        assertRoundTrip("time",
                List.of(LocalTime.of(23, 59, 59, 999_999_000), LocalTime.MIDNIGHT, LocalTime.of(1, 2, 3, 500_000_000), LocalTime.of(1, 2, 3, 1_000), "24:00:00"),
                List.of("23:59:59.999999", "00:00:00", "01:02:03.5", "01:02:03.000001", "24:00:00"));
        assertRoundTrip("timetz",
                List.of(OffsetTime.of(12, 0, 0, 0, ZoneOffset.ofHoursMinutes(5, 30)), OffsetTime.of(12, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(5, 30, 15)),
                        OffsetTime.of(12, 0, 0, 1_000, ZoneOffset.ofHours(-8)), OffsetTime.of(0, 0, 0, 0, ZoneOffset.UTC)),
                List.of("12:00:00+05:30", "12:00:00+05:30:15", "12:00:00.000001-08", "00:00:00+00"));
        assertRoundTrip("timestamp",
                List.of(LocalDateTime.of(2020, 1, 2, 3, 4, 5, 600_000_000), LocalDateTime.of(0, 1, 1, 0, 0), LocalDateTime.of(-4712, 1, 1, 0, 0),
                        LocalDateTime.of(10000, 1, 1, 0, 0, 0, 1_000), "infinity", LocalDateTime.of(1999, 12, 31, 23, 59, 59, 999_999_000)),
                List.of("2020-01-02 03:04:05.6", "0001-01-01 00:00:00 BC", "4713-01-01 00:00:00 BC",
                        "10000-01-01 00:00:00.000001", "infinity", "1999-12-31 23:59:59.999999"));
        assertRoundTrip("timestamptz",
                List.of(OffsetDateTime.of(2020, 1, 2, 3, 4, 5, 1_000, ZoneOffset.ofHoursMinutes(5, 30)),
                        ZonedDateTime.of(2021, 7, 1, 12, 0, 0, 0, ZoneId.of("Europe/Paris")),
                        Instant.EPOCH,
                        LocalDateTime.of(-1, 6, 1, 0, 0).toInstant(ZoneOffset.UTC),
                        OffsetDateTime.of(1, 1, 1, 1, 0, 0, 0, ZoneOffset.ofHours(2)),
                        OffsetDateTime.of(2020, 1, 1, 0, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(0, 0, 30)),
                        Instant.parse("2262-04-11T23:47:16.854775Z"),
                        "-infinity"),
                List.of("2020-01-01 21:34:05.000001+00",
                        "2021-07-01 10:00:00+00",
                        "1970-01-01 00:00:00+00",
                        "0002-06-01 00:00:00+00 BC",
                        "0001-12-31 23:00:00+00 BC",
                        "2019-12-31 23:59:30+00",
                        "2262-04-11 23:47:16.854775+00",
                        "-infinity"));
    }

    @Test
    void uuidAndTypesWrittenAsText()
            throws SQLException
    {
        assertRoundTrip("uuid",
                List.of(UUID.fromString("0123ABCD-4567-89ef-fedc-ba9876543210"), new UUID(0, 0), new UUID(-1, -1)),
                List.of("0123abcd-4567-89ef-fedc-ba9876543210", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"));
        assertRoundTrip("interval", List.of("1 day 02:03:04", "P1Y2M"), List.of("1 day 02:03:04", "1 year 2 mons"));
        assertRoundTrip("inet", List.of("192.168.0.1/24", "::1"), List.of("192.168.0.1/24", "::1/128"));
        assertRoundTrip("int4range", List.of("[1,5)", "(1,5]", "empty"), List.of("[1,5)", "[2,6)", "empty"));
        assertRoundTrip("point", List.of("(1,2)"), List.of("(1,2)"));
        assertRoundTrip("box", List.of("(1,1),(0,0)"), List.of("(1,1),(0,0)"));
        assertRoundTrip("varbit", List.of("10101"), List.of("10101"));
        assertRoundTrip("money", List.of("1.5"), List.of("$1.50"));
    }

    @Test
    void arrays()
            throws SQLException
    {
        assertRoundTrip("int4[]",
                List.of(List.of(1, 2, 3), Arrays.asList(1, null), List.of(), List.of(List.of(1, 2), List.of(3, 4)), "{5,6}"),
                List.of("{1,2,3}", "{1,NULL}", "{}", "{{1,2},{3,4}}", "{5,6}"));
        assertRoundTrip("int2[]", List.of(List.of(List.of(List.of(1), List.of(2)), List.of(List.of(3), List.of(4)))), List.of("{{{1},{2}},{{3},{4}}}"));
        assertRoundTrip("text[]",
                List.of(Arrays.asList("a b", "", "NULL", "null", "a\"b", "a\\b", "{x}", "a,b", "😀", null, " lead", "trail ", "\n", "\\.", "x;y"),
                        List.of(List.of("a", "b c"), List.of("{", "}"))),
                List.of("{\"a b\",\"\",\"NULL\",\"null\",\"a\\\"b\",\"a\\\\b\",\"{x}\",\"a,b\",😀,NULL,\" lead\",\"trail \",\"\n\",\"\\\\.\",x;y}",
                        "{{a,\"b c\"},{\"{\",\"}\"}}"));
        assertRoundTrip("varchar[]", List.of(List.of("x,y")), List.of("{\"x,y\"}"));
        assertRoundTrip("bytea[]", List.of(List.of(new byte[] {1, 2}, new byte[0])), List.of("{\"\\\\x0102\",\"\\\\x\"}"));
        assertRoundTrip("date[]", List.of(List.of(LocalDate.of(0, 1, 1), LocalDate.of(2020, 1, 1))), List.of("{\"0001-01-01 BC\",2020-01-01}"));
        assertRoundTrip("timestamptz[]", List.of(List.of(Instant.EPOCH)), List.of("{\"1970-01-01 00:00:00+00\"}"));
        assertRoundTrip("numeric[]", List.of(Arrays.asList(new BigDecimal("1.50"), Double.NaN, null)), List.of("{1.50,NaN,NULL}"));
        assertRoundTrip("float8[]", List.of(List.of(Double.NaN, -0.0, 1e300, Double.NEGATIVE_INFINITY)), List.of("{NaN,-0,1e+300,-Infinity}"));
        assertRoundTrip("bool[]", List.of(List.of(true, false)), List.of("{t,f}"));
        assertRoundTrip("uuid[]", List.of(List.of(new UUID(0, 1))), List.of("{00000000-0000-0000-0000-000000000001}"));
        assertRoundTrip("jsonb[]", List.of(List.of("{\"a\": [1, 2]}")), List.of("{\"{\\\"a\\\": [1, 2]}\"}"));
        assertRoundTrip("box[]", List.of(List.of("(1,1),(0,0)", "(2,2),(1,1)")), List.of("{(1,1),(0,0);(2,2),(1,1)}"));
        assertRoundTrip("mood[]", List.of(List.of("happy", "so so")), List.of("{happy,\"so so\"}"));
    }

    /**
     * Creates a table with a column of {@code columnType}, resolves its encoder from the catalog's
     * {@code typname} as sink-merge does, COPYs {@code values} under every format and compares
     * {@code v::text}.
     */
    private void assertRoundTrip(String columnType, List<?> values, List<String> expected)
            throws SQLException
    {
        assertThat(values).hasSameSizeAs(expected);
        String table = "t" + tables++;
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE " + table + " (id int, v " + columnType + ")");
        }
        ValueEncoder encoder = ValueEncoders.forType(typeName(table));
        for (CopyFormat format : FORMATS) {
            long rows = CopyLoader.copyIn(connection, CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), table), List.of("id", "v"), format), format, writer -> {
                for (int i = 0; i < values.size(); i++) {
                    writer.writeLong(i);
                    Object value = values.get(i);
                    if (value == null) {
                        writer.writeNull();
                    }
                    else {
                        encoder.encode(value, writer);
                    }
                    writer.endRow();
                }
            });
            assertThat(rows).isEqualTo(values.size());
            assertThat(readBackAndEmpty(table)).as("%s with %s", columnType, format).isEqualTo(expected);
        }
        assertBinaryRoundTrip(table, columnType, values, expected);
    }

    /**
     * The same values in binary, where the type has a binary encoder: every value it accepts must
     * read back as the CSV path's does (the others are written as CSV by the sink).
     */
    private void assertBinaryRoundTrip(String table, String columnType, List<?> values, List<String> expected)
            throws SQLException
    {
        Optional<BinaryValueEncoder> found = BinaryValueEncoders.forType(typeName(table));
        assertThat(found.isPresent()).as("binary encoder of %s", columnType).isEqualTo(BINARY_TYPES.contains(columnType.replaceAll("\\(.*", "")));
        if (found.isEmpty()) {
            return;
        }
        BinaryValueEncoder encoder = found.get();
        List<Integer> accepted = new ArrayList<>();
        for (int i = 0; i < values.size(); i++) {
            if (values.get(i) == null || encoder.accepts(values.get(i))) {
                accepted.add(i);
            }
        }
        assertThat(accepted).as("values of %s written in binary", columnType).isNotEmpty();
        long rows = CopyLoader.copyInBinary(connection, CopyLoader.binaryCopyStatement(SqlIdentifiers.qualified(schema.name(), table), List.of("id", "v")),
                NulCharacterHandling.FAIL, writer -> {
                    for (int i : accepted) {
                        writer.writeInt(i);
                        Object value = values.get(i);
                        if (value == null) {
                            writer.writeNull();
                        }
                        else {
                            encoder.encode(value, writer);
                        }
                        writer.endRow();
                    }
                }, CopyListener.NONE);
        assertThat(rows).isEqualTo(accepted.size());
        List<String> expectedAccepted = new ArrayList<>();
        accepted.forEach(i -> expectedAccepted.add(expected.get(i)));
        assertThat(readBackAndEmpty(table)).as("%s in binary", columnType).isEqualTo(expectedAccepted);
    }

    /** {@code v::text} of the table's rows by id; then the table is emptied for the next COPY. */
    private List<String> readBackAndEmpty(String table)
            throws SQLException
    {
        List<String> actual = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT v::text FROM " + table + " ORDER BY id")) {
            while (result.next()) {
                actual.add(result.getString(1));
            }
            statement.execute("TRUNCATE " + table);
        }
        return actual;
    }

    private String typeName(String table)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = ?::regclass AND a.attname = 'v'")) {
            statement.setString(1, schema.name() + "." + table);
            try (ResultSet result = statement.executeQuery()) {
                assertThat(result.next()).isTrue();
                return result.getString(1);
            }
        }
    }
}
