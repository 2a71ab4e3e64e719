package io.pgsink.copy.encode.binary;

import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.load.CopyListener;
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

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Binary COPY gives the target the same values as CSV, for every type with a binary form: random
 * rows of every such type (each fed the Java classes the adapters send, integers into numeric and
 * float columns included, NULLs, extremes, infinities, unicode text) are COPYed once as CSV and once
 * as binary into two tables of the same columns, and every column must read back as the same text.
 * Values the binary encoders do not accept are not generated: those COPYs are written as CSV.
 */
class BinaryCopyRoundTripPropertyTest
{
    private static final String COLUMNS = "i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, n2 numeric(12,2), b bool, t text, v varchar(40), "
            + "j json, jb jsonb, by bytea, d date, tm time, ttz timetz, ts timestamp, ts3 timestamp(3), tstz timestamptz, u uuid";
    private static final List<String> TYPES = List.of("int2", "int4", "int8", "float4", "float8", "numeric", "numeric", "bool", "text", "varchar",
            "json", "jsonb", "bytea", "date", "time", "timetz", "timestamp", "timestamp", "timestamptz", "uuid");
    private static final List<String> NAMES = Arrays.stream(COLUMNS.split(", ")).map(column -> column.substring(0, column.indexOf(' '))).toList();

    private static TestingSchema schema;
    private static Connection connection;

    @BeforeContainer
    static void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("binary_property");
        connection = schema.connect();
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE csv_rows (id int, " + COLUMNS + ")");
            statement.execute("CREATE TABLE binary_rows (id int, " + COLUMNS + ")");
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

    @Property(tries = 150)
    void binaryGivesTheSameValuesAsCsv(@ForAll("rows") List<List<Object>> rows)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("TRUNCATE csv_rows");
            statement.execute("TRUNCATE binary_rows");
        }
        List<String> columns = new ArrayList<>(List.of("id"));
        columns.addAll(NAMES);
        ValueEncoder[] csv = TYPES.stream().map(ValueEncoders::forType).toArray(ValueEncoder[]::new);
        BinaryValueEncoder[] binary = TYPES.stream().map(type -> BinaryValueEncoders.forType(type).orElseThrow()).toArray(BinaryValueEncoder[]::new);
        for (List<Object> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                assertThat(row.get(i) == null || binary[i].accepts(row.get(i))).as("%s accepts %s", TYPES.get(i), row.get(i)).isTrue();
            }
        }

        CopyFormat format = CopyFormat.DEFAULT;
        CopyLoader.copyIn(connection, CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "csv_rows"), columns, format), format, writer -> {
            for (int id = 0; id < rows.size(); id++) {
                writer.writeLong(id);
                List<Object> row = rows.get(id);
                for (int i = 0; i < row.size(); i++) {
                    if (row.get(i) == null) {
                        writer.writeNull();
                    }
                    else {
                        csv[i].encode(row.get(i), writer);
                    }
                }
                writer.endRow();
            }
        });
        long copied = CopyLoader.copyInBinary(connection, CopyLoader.binaryCopyStatement(SqlIdentifiers.qualified(schema.name(), "binary_rows"), columns),
                NulCharacterHandling.FAIL, writer -> {
                    for (int id = 0; id < rows.size(); id++) {
                        writer.writeInt(id);
                        List<Object> row = rows.get(id);
                        for (int i = 0; i < row.size(); i++) {
                            if (row.get(i) == null) {
                                writer.writeNull();
                            }
                            else {
                                binary[i].encode(row.get(i), writer);
                            }
                        }
                        writer.endRow();
                    }
                }, CopyListener.NONE);
        assertThat(copied).isEqualTo(rows.size());
        assertThat(readBack("binary_rows")).isEqualTo(readBack("csv_rows"));
    }

    private static List<List<String>> readBack(String table)
            throws SQLException
    {
        StringBuilder select = new StringBuilder("SELECT id");
        for (String name : NAMES) {
            select.append(", ").append(name).append("::text");
        }
        List<List<String>> rows = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(select + " FROM " + table + " ORDER BY id")) {
            while (result.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 0; i <= NAMES.size(); i++) {
                    row.add(result.getString(i + 1));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    @Provide
    Arbitrary<List<List<Object>>> rows()
    {
        List<Arbitrary<Object>> columns = List.of(
                integers(Short.MIN_VALUE, Short.MAX_VALUE),
                integers(Integer.MIN_VALUE, Integer.MAX_VALUE),
                Arbitraries.oneOf(integers(Long.MIN_VALUE, Long.MAX_VALUE), Arbitraries.bigIntegers().between(BigInteger.valueOf(Long.MIN_VALUE), BigInteger.valueOf(Long.MAX_VALUE)).map(value -> value)),
                Arbitraries.oneOf(Arbitraries.floats().map(value -> value), Arbitraries.of(Float.NaN, Float.POSITIVE_INFINITY, -0.0f, Float.MIN_VALUE, 0.5, 1e10, Double.NEGATIVE_INFINITY), integers(-1_000_000_000L, 1_000_000_000L)),
                Arbitraries.oneOf(doubles(), Arbitraries.floats().map(value -> value), integers(Long.MIN_VALUE, Long.MAX_VALUE)),
                numerics(),
                Arbitraries.bigDecimals().between(new BigDecimal("-9999999999.99"), new BigDecimal("9999999999.99")).ofScale(3).map(value -> value),
                Arbitraries.of(true, false).map(value -> value),
                texts(),
                Arbitraries.strings().withCharRange(' ', '~').withCharRange('\u00a0', '\ud7ff').ofMaxLength(40).map(value -> value),
                Arbitraries.of("{\"a\": [1, 2.50, null], \"b\": \"x\\ny\"}", "[]", "  {\"z\":1,\"a\":\"\\u00e9\"}  ", "\"😀\"", "12.50").map(value -> value),
                Arbitraries.of("{\"b\": 1,  \"a\": [true, {\"c\": \"x,y\"}]}", "[1, 2.50, 1e3]", "null", "{\"k\": \"😀\\\"\"}").map(value -> value),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(20).map(value -> value),
                Arbitraries.oneOf(Arbitraries.longs().between(LocalDate.of(-4713, 11, 24).toEpochDay(), LocalDate.of(5874897, 12, 31).toEpochDay()).map(LocalDate::ofEpochDay),
                        Arbitraries.of("infinity", "-infinity", LocalDate.of(2000, 1, 1), LocalDate.of(0, 1, 1))),
                Arbitraries.oneOf(Arbitraries.longs().between(0, 86_399_999_999L).map(micros -> LocalTime.ofNanoOfDay(micros * 1000)), Arbitraries.just("24:00:00")),
                Combinators.combine(Arbitraries.longs().between(0, 86_399_999_999L), Arbitraries.integers().between(-16 * 3600 + 1, 16 * 3600 - 1))
                        .as((micros, offset) -> OffsetTime.of(LocalTime.ofNanoOfDay(micros * 1000), ZoneOffset.ofTotalSeconds(offset))),
                timestamps().map(instant -> LocalDateTime.ofEpochSecond(instant.getEpochSecond(), instant.getNano(), ZoneOffset.UTC)),
                timestamps().map(instant -> LocalDateTime.ofEpochSecond(instant.getEpochSecond(), instant.getNano(), ZoneOffset.UTC)),
                Arbitraries.oneOf(
                        Combinators.combine(timestamps(), Arbitraries.integers().between(-16 * 3600 + 1, 16 * 3600 - 1)).as((instant, offset) -> OffsetDateTime.ofInstant(instant, ZoneOffset.ofTotalSeconds(offset))),
                        timestamps().map(instant -> instant),
                        Arbitraries.of("infinity", "-infinity")),
                Arbitraries.longs().tuple2().map(bits -> new UUID(bits.get1(), bits.get2())));
        Arbitrary<List<Object>> row = Combinators.combine(columns.stream().map(column -> column.injectNull(0.1)).toList()).as(values -> values);
        return row.list().ofMaxSize(8);
    }

    private static Arbitrary<Object> integers(long min, long max)
    {
        return Arbitraries.oneOf(
                Arbitraries.longs().between(min, max).map(value -> value),
                Arbitraries.of(min, max, 0L).map(value -> value),
                Arbitraries.integers().between((int) Math.max(min, Integer.MIN_VALUE), (int) Math.min(max, Integer.MAX_VALUE)).map(value -> value),
                Arbitraries.shorts().between((short) Math.max(min, Short.MIN_VALUE), (short) Math.min(max, Short.MAX_VALUE)).map(value -> value));
    }

    private static Arbitrary<Object> doubles()
    {
        return Arbitraries.oneOf(
                Arbitraries.doubles().map(value -> value),
                Arbitraries.longs().map(Double::longBitsToDouble).filter(value -> !Double.isNaN(value)).map(value -> value),
                Arbitraries.of(Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, Double.MIN_VALUE, Double.MAX_VALUE, 0.1, 1e-5));
    }

    /** BigDecimals of every size and scale, negative scales and huge ones included, integers, doubles, floats and the strings a numeric may arrive as. */
    private static Arbitrary<Object> numerics()
    {
        Arbitrary<BigDecimal> decimals = Combinators.combine(Arbitraries.bigIntegers().between(BigInteger.TEN.pow(60).negate(), BigInteger.TEN.pow(60)), Arbitraries.integers().between(-40, 60))
                .as(BigDecimal::new);
        Arbitrary<BigDecimal> small = Combinators.combine(Arbitraries.longs().between(-999_999_999_999_999L, 999_999_999_999_999L), Arbitraries.integers().between(0, 20))
                .as(BigDecimal::valueOf);
        return Arbitraries.oneOf(
                decimals.map(value -> value),
                small.map(value -> value),
                integers(Long.MIN_VALUE, Long.MAX_VALUE),
                Arbitraries.bigIntegers().between(BigInteger.TEN.pow(40).negate(), BigInteger.TEN.pow(40)).map(value -> value),
                doubles(),
                Arbitraries.floats().map(value -> value),
                Arbitraries.of("NaN", "Infinity", "-Infinity", "-0", "007.50", ".5", "5.", "-123456789012345678901234567890.000123"));
    }

    private static Arbitrary<Instant> timestamps()
    {
        long min = LocalDate.of(-4713, 11, 25).toEpochDay() * 86_400;
        // beyond year 280000 the binary encoder leaves timestamps to CSV
        long max = LocalDate.of(279_999, 12, 30).toEpochDay() * 86_400;
        return Arbitraries.oneOf(
                Combinators.combine(Arbitraries.longs().between(min, max), Arbitraries.integers().between(0, 999_999)).as((seconds, micros) -> Instant.ofEpochSecond(seconds, micros * 1000L)),
                Combinators.combine(Arbitraries.longs().between(0, 4_000_000_000L), Arbitraries.integers().between(0, 999_999)).as((seconds, micros) -> Instant.ofEpochSecond(seconds, micros * 1000L)));
    }

    private static Arbitrary<Object> texts()
    {
        Arbitrary<String> piece = Arbitraries.oneOf(
                Arbitraries.strings().alpha().numeric().ofMaxLength(5),
                Arbitraries.of(",", "\"", "\\", "\n", "\r\n", "\\.", "", "NULL", "é", "€", "😀", "𝄞", "中", "\u0080", "\u07ff", "\u0800", "\uffff"));
        return piece.list().ofMaxSize(6).map(pieces -> (Object) String.join("", pieces));
    }
}
