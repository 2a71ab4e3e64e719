package io.pgsink.copy.encode.text;

import io.pgsink.copy.testing.CollectingChunkConsumer;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.List;
import java.util.Random;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The exact CSV field each encoder writes. {@link ValueEncodersRoundTripTest} checks that
 * PostgreSQL reads them as the intended values.
 */
class ValueEncodersTest
{
    @Test
    void integers()
    {
        assertThat(encode("int2", (short) -32768)).isEqualTo("-32768");
        assertThat(encode("int2", (byte) 7)).isEqualTo("7");
        assertThat(encode("int2", 32767)).isEqualTo("32767");
        assertThat(encode("int4", Integer.MIN_VALUE)).isEqualTo("-2147483648");
        assertThat(encode("int4", 5L)).isEqualTo("5");
        assertThat(encode("int8", Long.MIN_VALUE)).isEqualTo("-9223372036854775808");
        assertThat(encode("int8", BigInteger.valueOf(Long.MAX_VALUE))).isEqualTo("9223372036854775807");
        assertThat(encode("int8", "42")).isEqualTo("42");
        assertThatThrownBy(() -> encode("int2", 32768))
                .isInstanceOf(ValueEncodingException.class)
                .hasMessage("integer value out of range for PostgreSQL type int2 [-32768, 32767]");
        assertThatThrownBy(() -> encode("int4", Long.MAX_VALUE)).hasMessageStartingWith("integer value out of range for PostgreSQL type int4");
        assertThatThrownBy(() -> encode("int8", BigInteger.ONE.shiftLeft(63))).hasMessageStartingWith("integer value out of range for PostgreSQL type int8");
        assertThatThrownBy(() -> encode("int8", 1.0)).hasMessage("cannot encode java.lang.Double as PostgreSQL type int8");
        assertThatThrownBy(() -> encode("int4", new BigDecimal("1"))).hasMessage("cannot encode java.math.BigDecimal as PostgreSQL type int4");
    }

    @Test
    void floats()
    {
        assertThat(encode("float8", 0.1)).isEqualTo("0.1");
        assertThat(encode("float8", -0.0)).isEqualTo("-0.0");
        assertThat(encode("float8", Double.NaN)).isEqualTo("NaN");
        assertThat(encode("float8", Double.POSITIVE_INFINITY)).isEqualTo("Infinity");
        assertThat(encode("float8", Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
        // a float4 source value keeps its decimal form in a float8 column
        assertThat(encode("float8", 0.1f)).isEqualTo("0.1");
        assertThat(encode("float4", 1e10)).isEqualTo("1.0E10");
        assertThat(encode("float4", 3)).isEqualTo("3");
        assertThat(encode("float8", new BigDecimal("1.25"))).isEqualTo("1.25");
        assertThat(encode("float8", new java.util.concurrent.atomic.AtomicLong(3))).isEqualTo("3.0");
        assertThatThrownBy(() -> encode("float4", true)).hasMessage("cannot encode java.lang.Boolean as PostgreSQL type float4");
    }

    @Test
    void numeric()
    {
        assertThat(encode("numeric", new BigDecimal("1.500"))).isEqualTo("1.500");
        assertThat(encode("numeric", new BigDecimal("-0.000001"))).isEqualTo("-0.000001");
        assertThat(encode("numeric", new BigDecimal("1E+3"))).isEqualTo("1000");
        assertThat(encode("numeric", new BigDecimal("1E-8"))).isEqualTo("0.00000001");
        assertThat(encode("numeric", new BigDecimal("0E-10"))).isEqualTo("0.0000000000");
        // beyond a long's 18 digits, or a scale above 18: BigDecimal's own text
        assertThat(encode("numeric", new BigDecimal("-1234567890123456789.25"))).isEqualTo("-1234567890123456789.25");
        assertThat(encode("numeric", new BigDecimal("1E-19"))).isEqualTo("0.0000000000000000001");
        assertThat(encode("numeric", new BigDecimal("-999999999999999999.999999999999999999"))).isEqualTo("-999999999999999999.999999999999999999");
        assertThat(encode("numeric", BigInteger.TEN.pow(40))).isEqualTo("1" + "0".repeat(40));
        assertThat(encode("numeric", 12L)).isEqualTo("12");
        assertThat(encode("numeric", Double.NaN)).isEqualTo("NaN");
        assertThat(encode("numeric", Double.NEGATIVE_INFINITY)).isEqualTo("-Infinity");
        assertThat(encode("numeric", Float.POSITIVE_INFINITY)).isEqualTo("Infinity");
        assertThat(encode("numeric", "NaN")).isEqualTo("NaN");
        assertThatThrownBy(() -> encode("numeric", "x".getBytes(StandardCharsets.UTF_8))).hasMessage("cannot encode [B as PostgreSQL type numeric");
    }

    @Test
    void booleanBytesAndUuid()
    {
        assertThat(encode("bool", true)).isEqualTo("t");
        assertThat(encode("bool", false)).isEqualTo("f");
        assertThatThrownBy(() -> encode("bool", 1)).hasMessage("cannot encode java.lang.Integer as PostgreSQL type bool");
        assertThat(encode("bytea", new byte[] {(byte) 0xde, (byte) 0xad})).isEqualTo("\"\\xdead\"");
        assertThat(encode("bytea", ByteBuffer.wrap(new byte[] {1, 2, 3}, 1, 2))).isEqualTo("\"\\x0203\"");
        assertThat(encode("uuid", UUID.fromString("0123abcd-4567-89ef-fedc-ba9876543210"))).isEqualTo("0123abcd-4567-89ef-fedc-ba9876543210");
        assertThat(encode("uuid", new UUID(0, 0))).isEqualTo("00000000-0000-0000-0000-000000000000");
        assertThat(encode("uuid", new UUID(-1, -1))).isEqualTo("ffffffff-ffff-ffff-ffff-ffffffffffff");
        Random random = new Random(7);
        for (int i = 0; i < 1000; i++) {
            UUID uuid = new UUID(random.nextLong(), random.nextLong());
            assertThat(encode("uuid", uuid)).isEqualTo(uuid.toString());
        }
        assertThatThrownBy(() -> encode("uuid", 1)).hasMessage("cannot encode java.lang.Integer as PostgreSQL type uuid");
    }

    @Test
    void text()
    {
        assertThat(encode("text", "a,b")).isEqualTo("\"a,b\"");
        assertThat(encode("varchar", new StringBuilder("sb"))).isEqualTo("sb");
        assertThat(encode("jsonb", "{\"a\": 1}")).isEqualTo("\"{\"\"a\"\": 1}\"");
        // types without an encoder of their own are text, and refuse what is not text
        assertThat(encode("interval", "1 day")).isEqualTo("1 day");
        assertThat(encode("my_enum", "happy")).isEqualTo("happy");
        assertThatThrownBy(() -> encode("my_enum", 1)).hasMessage("cannot encode java.lang.Integer as PostgreSQL type my_enum");
        assertThatThrownBy(() -> encode("text", 1)).hasMessage("cannot encode java.lang.Integer as PostgreSQL type text");
        // the TOAST placeholder can never be written
        assertThatThrownBy(() -> encode("text", UnavailableValue.INSTANCE)).hasMessage("cannot encode io.pgsink.core.change.UnavailableValue as PostgreSQL type text");
        assertThatThrownBy(() -> encode("text", "a\0b")).hasMessageContaining("NUL character (U+0000) at position 2");
    }

    @Test
    void dates()
    {
        assertThat(encode("date", LocalDate.of(2024, 2, 29))).isEqualTo("2024-02-29");
        assertThat(encode("date", LocalDate.of(33, 1, 9))).isEqualTo("0033-01-09");
        // ISO year 0 is 1 BC
        assertThat(encode("date", LocalDate.of(0, 1, 1))).isEqualTo("0001-01-01 BC");
        assertThat(encode("date", LocalDate.of(-4712, 11, 24))).isEqualTo("4713-11-24 BC");
        assertThat(encode("date", LocalDate.of(10000, 1, 1))).isEqualTo("10000-01-01");
        assertThat(encode("date", LocalDate.of(5874897, 12, 31))).isEqualTo("5874897-12-31");
        assertThat(encode("date", "infinity")).isEqualTo("infinity");
        assertThatThrownBy(() -> encode("date", LocalDateTime.of(2020, 1, 1, 0, 0))).hasMessage("cannot encode java.time.LocalDateTime as PostgreSQL type date");
    }

    @Test
    void times()
    {
        assertThat(encode("time", LocalTime.MIDNIGHT)).isEqualTo("00:00:00");
        assertThat(encode("time", LocalTime.of(23, 59, 59, 999_999_000))).isEqualTo("23:59:59.999999");
        assertThat(encode("time", LocalTime.of(1, 2, 3, 500_000_000))).isEqualTo("01:02:03.5");
        assertThat(encode("time", LocalTime.of(1, 2, 3, 1_000))).isEqualTo("01:02:03.000001");
        assertThat(encode("time", LocalTime.of(1, 2, 3, 120_000))).isEqualTo("01:02:03.00012");
        assertThat(encode("time", "24:00:00")).isEqualTo("24:00:00");
        assertThatThrownBy(() -> encode("time", LocalTime.of(1, 2, 3, 1)))
                .hasMessage("time value has nanosecond precision, but PostgreSQL keeps microseconds; pgsink does not round silently");
        assertThat(encode("timetz", OffsetTime.of(12, 0, 0, 0, ZoneOffset.ofHoursMinutes(5, 30)))).isEqualTo("12:00:00+05:30");
        assertThat(encode("timetz", OffsetTime.of(12, 0, 0, 0, ZoneOffset.ofHoursMinutesSeconds(-3, -15, -20)))).isEqualTo("12:00:00-03:15:20");
        assertThat(encode("timetz", OffsetTime.of(12, 0, 0, 0, ZoneOffset.UTC))).isEqualTo("12:00:00+00:00");
        assertThatThrownBy(() -> encode("timetz", LocalTime.NOON)).hasMessage("cannot encode java.time.LocalTime as PostgreSQL type timetz");
    }

    @Test
    void timestamps()
    {
        assertThat(encode("timestamp", LocalDateTime.of(2020, 1, 2, 3, 4, 5, 6_000))).isEqualTo("2020-01-02 03:04:05.000006");
        assertThat(encode("timestamp", LocalDateTime.of(0, 1, 1, 0, 0))).isEqualTo("0001-01-01 00:00:00 BC");
        assertThat(encode("timestamp", LocalDateTime.of(10000, 12, 31, 23, 59, 59))).isEqualTo("10000-12-31 23:59:59");
        assertThatThrownBy(() -> encode("timestamp", LocalDateTime.of(2020, 1, 2, 3, 4, 5, 6_001)))
                .hasMessage("timestamp value has nanosecond precision, but PostgreSQL keeps microseconds; pgsink does not round silently");
        assertThatThrownBy(() -> encode("timestamp", Instant.EPOCH)).hasMessage("cannot encode java.time.Instant as PostgreSQL type timestamp");

        assertThat(encode("timestamptz", OffsetDateTime.of(2020, 1, 2, 3, 4, 5, 10_000, ZoneOffset.ofHours(-8)))).isEqualTo("2020-01-02 03:04:05.00001-08:00");
        assertThat(encode("timestamptz", OffsetDateTime.of(-1, 6, 1, 0, 0, 0, 0, ZoneOffset.ofHours(2)))).isEqualTo("0002-06-01 00:00:00+02:00 BC");
        assertThat(encode("timestamptz", ZonedDateTime.of(2021, 7, 1, 12, 0, 0, 0, ZoneId.of("Europe/Paris")))).isEqualTo("2021-07-01 12:00:00+02:00");
        assertThat(encode("timestamptz", Instant.EPOCH)).isEqualTo("1970-01-01 00:00:00+00:00");
        assertThat(encode("timestamptz", Instant.ofEpochSecond(-1, 999_999_000))).isEqualTo("1969-12-31 23:59:59.999999+00:00");
        assertThat(encode("timestamptz", LocalDateTime.of(0, 12, 31, 23, 0).toInstant(ZoneOffset.UTC))).isEqualTo("0001-12-31 23:00:00+00:00 BC");
        assertThatThrownBy(() -> encode("timestamptz", Instant.ofEpochSecond(0, 1))).hasMessageStartingWith("timestamptz value has nanosecond precision");
        assertThatThrownBy(() -> encode("timestamptz", LocalDateTime.of(2020, 1, 1, 0, 0))).hasMessage("cannot encode java.time.LocalDateTime as PostgreSQL type timestamptz");
    }

    @Test
    void instantsMatchJavaTime()
    {
        Random random = new Random(11);
        long min = LocalDateTime.of(-5000, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC);
        long max = LocalDateTime.of(300_000, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC);
        for (int i = 0; i < 5_000; i++) {
            long seconds = min + (long) (random.nextDouble() * (max - min));
            Instant instant = Instant.ofEpochSecond(seconds, random.nextInt(1_000_000) * 1_000L);
            assertThat(encode("timestamptz", instant)).as(instant.toString()).isEqualTo(encode("timestamptz", instant.atOffset(ZoneOffset.UTC)));
            long day = Math.floorDiv(seconds, 86_400);
            long civil = DateTimeText.civilFromDays(day);
            LocalDate expected = LocalDate.ofEpochDay(day);
            assertThat(List.of(DateTimeText.civilYear(civil), DateTimeText.civilMonth(civil), DateTimeText.civilDay(civil)))
                    .isEqualTo(List.of((long) expected.getYear(), expected.getMonthValue(), expected.getDayOfMonth()));
        }
    }

    @Test
    void arrays()
    {
        assertThat(encode("_int4", List.of(1, 2, 3))).isEqualTo("\"{1,2,3}\"");
        assertThat(encode("_int4", List.of(-1))).isEqualTo("{-1}");
        assertThat(encode("_int4", Arrays.asList(1, null))).isEqualTo("\"{1,NULL}\"");
        assertThat(encode("_int4", List.of())).isEqualTo("{}");
        assertThat(encode("_int4", List.of(List.of(1, 2), List.of(3, 4)))).isEqualTo("\"{{1,2},{3,4}}\"");
        assertThat(encode("_int8", new LinkedList<>(List.of(5L, 6L)))).isEqualTo("\"{5,6}\"");
        assertThat(encode("_int4", "{1,2}")).isEqualTo("\"{1,2}\"");
        assertThat(encode("_text", Arrays.asList("a b", "", "NULL", "a\"b", "a\\b", null, "x")))
                .isEqualTo("\"{\"\"a b\"\",\"\"\"\",\"\"NULL\"\",\"\"a\\\"\"b\"\",\"\"a\\\\b\"\",NULL,x}\"");
        assertThat(encode("_bytea", List.of(new byte[] {1, 2}))).isEqualTo("\"{\"\"\\\\x0102\"\"}\"");
        assertThat(encode("_date", List.of(LocalDate.of(0, 1, 1), LocalDate.of(2020, 1, 1)))).isEqualTo("\"{\"\"0001-01-01 BC\"\",2020-01-01}\"");
        assertThat(encode("_box", List.of("(1,1),(0,0)", "(2,2),(1,1)"))).isEqualTo("\"{\"\"(1,1),(0,0)\"\";\"\"(2,2),(1,1)\"\"}\"");
        // elements that are strings are the element type's text form
        assertThat(encode("_int4", List.of("7", 8))).isEqualTo("\"{7,8}\"");
        assertThat(encode("_my_enum", List.of("happy", "so so"))).isEqualTo("\"{happy,\"\"so so\"\"}\"");
        assertThatThrownBy(() -> encode("_int4", List.of(1, "x", 2.5))).hasMessage("cannot encode java.lang.Double as PostgreSQL type int4");
        assertThatThrownBy(() -> encode("_int4", new int[] {1})).hasMessage("cannot encode [I as PostgreSQL type _int4");
        assertThatThrownBy(() -> encode("_int4", List.of(List.of(List.of(List.of(List.of(List.of(List.of(1)))))))))
                .hasMessage("array of PostgreSQL type _int4 has more than 6 dimensions");
    }

    @Test
    void encodersAreResolvedPerType()
    {
        assertThat(ValueEncoders.forType("int8")).isSameAs(ValueEncoders.forType("int8"));
        assertThat(ValueEncoders.forType("varchar")).isSameAs(ValueEncoders.forType("varchar"));
        assertThat(ValueEncoders.forType("_int4").toString()).isEqualTo("ArrayEncoder[_int4]");
        assertThat(ValueEncoders.forType("geometry").toString()).isEqualTo("TextEncoder[geometry]");
        assertThat(ValueEncoders.forType("_").toString()).isEqualTo("TextEncoder[_]");
    }

    @Test
    void encodedFieldsFollowTheCopyFormat()
    {
        CopyFormat format = new CopyFormat('-', '\'', '|', "0", NulCharacterHandling.FAIL);
        assertThat(encode(format, "int4", -5)).isEqualTo("'-5'");
        assertThat(encode(format, "int4", 0)).isEqualTo("'0'");
        assertThat(encode(format, "date", LocalDate.of(2020, 1, 2))).isEqualTo("'2020-01-02'");
        assertThat(encode(format, "_text", List.of("it's", "|"))).isEqualTo("'{it|'s,||}'");
    }

    private static String encode(String type, Object value)
    {
        return encode(CopyFormat.DEFAULT, type, value);
    }

    private static String encode(CopyFormat format, String type, Object value)
    {
        CollectingChunkConsumer output = new CollectingChunkConsumer();
        CsvWriter writer = new CsvWriter(format, output);
        ValueEncoders.forType(type).encode(value, writer);
        try {
            writer.endRow();
            writer.finish();
        }
        catch (SQLException e) {
            throw new AssertionError(e);
        }
        String text = output.text();
        assertThat(text).endsWith("\n");
        return text.substring(0, text.length() - 1);
    }
}
