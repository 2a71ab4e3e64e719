package io.pgsink.connector.debezium;

import org.jetbrains.annotations.Nullable;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;

/**
 * The {@link ValueConverter}s of Debezium's temporal types ({@code io.debezium.time.*} and Kafka
 * Connect's {@code Date}, {@code Time}, {@code Timestamp}), chosen by {@link ValueConverters}: to
 * {@code LocalDate}, {@code LocalTime}, {@code LocalDateTime}, {@code OffsetDateTime} and
 * {@code OffsetTime}, keeping PostgreSQL's {@code infinity} values and {@code 24:00:00} as the text
 * PostgreSQL reads back, and rejecting dates outside PostgreSQL's range with a message.
 */
final class TemporalConverters
{
    /**
     * Debezium writes PostgreSQL's {@code infinity} dates as these day numbers (its internal
     * "infinite" {@code LocalDate}s converted to epoch days), and infinite timestamps as these
     * microsecond and millisecond numbers (pgjdbc's infinity sentinels), or as the extreme longs.
     */
    static final long DATE_POSITIVE_INFINITY_DAYS = LocalDate.parse("-5877611-06-21").toEpochDay();
    static final long DATE_NEGATIVE_INFINITY_DAYS = LocalDate.parse("-5877611-06-22").toEpochDay();
    static final long TIMESTAMP_POSITIVE_INFINITY_MICROS = 9223372036825200000L;
    static final long TIMESTAMP_NEGATIVE_INFINITY_MICROS = -9223372036832400000L;

    /**
     * Inside arrays, pgjdbc hands Debezium infinite dates as {@code java.sql.Date}s of its infinity
     * sentinels, which Debezium turns into day numbers through {@code toLocalDate()} (default time
     * zone) and an int cast. Those numbers lie outside PostgreSQL's date range, so they cannot be
     * real dates.
     */
    static final long DATE_ARRAY_POSITIVE_INFINITY_DAYS = arrayInfinityDays(TIMESTAMP_POSITIVE_INFINITY_MICROS);
    static final long DATE_ARRAY_NEGATIVE_INFINITY_DAYS = arrayInfinityDays(TIMESTAMP_NEGATIVE_INFINITY_MICROS);
    private static final LocalDate POSTGRESQL_MIN_DATE = LocalDate.of(-4713, 11, 24);
    private static final LocalDate POSTGRESQL_MAX_DATE = LocalDate.of(5874897, 12, 31);
    /** PostgreSQL's first timestamp, 4714-11-24 00:00:00 BC (Julian day 0), in microseconds since 1970. */
    static final long POSTGRESQL_MIN_TIMESTAMP_MICROS = POSTGRESQL_MIN_DATE.toEpochDay() * 86_400_000_000L;
    /** The last timestamp a {@code MicroTimestamp} holds: {@code Long.MAX_VALUE} microseconds since 1970. */
    static final String MICRO_TIMESTAMP_END = "294247-01-10 04:00:54.775807";

    private static final long MICROS_PER_DAY = 86_400_000_000L;
    private static final String END_OF_DAY = "24:00:00";

    static final ValueConverter DATE_DAYS = value -> {
        long days = ((Number) value).longValue();
        if (days == DATE_POSITIVE_INFINITY_DAYS) {
            return "infinity";
        }
        if (days == DATE_NEGATIVE_INFINITY_DAYS) {
            return "-infinity";
        }
        LocalDate date = LocalDate.ofEpochDay(days);
        if (date.isBefore(POSTGRESQL_MIN_DATE) || date.isAfter(POSTGRESQL_MAX_DATE)) {
            if (days == DATE_ARRAY_POSITIVE_INFINITY_DAYS) {
                return "infinity";
            }
            if (days == DATE_ARRAY_NEGATIVE_INFINITY_DAYS) {
                return "-infinity";
            }
        }
        return date;
    };

    static final ValueConverter TIME_MILLIS = value -> timeOfDay(((Number) value).longValue() * 1_000);
    static final ValueConverter TIME_MICROS = value -> timeOfDay(((Number) value).longValue());
    static final ValueConverter TIME_NANOS = value -> {
        long nanos = ((Number) value).longValue();
        return nanos == MICROS_PER_DAY * 1_000 ? END_OF_DAY : LocalTime.ofNanoOfDay(nanos);
    };

    static final ValueConverter TIMESTAMP_MILLIS = value -> {
        long millis = ((Number) value).longValue();
        if (millis == TIMESTAMP_POSITIVE_INFINITY_MICROS / 1_000) {
            return "infinity";
        }
        if (millis == TIMESTAMP_NEGATIVE_INFINITY_MICROS / 1_000) {
            return "-infinity";
        }
        return localDateTime(Math.floorDiv(millis, 1_000), Math.floorMod(millis, 1_000) * 1_000_000L);
    };

    /**
     * A {@code MicroTimestamp}. Debezium computes it as {@code TimeUnit.SECONDS.toMicros(epochSecond)}
     * plus the microseconds of the second; the multiplication saturates at {@code Long.MAX_VALUE}
     * and the addition then wraps, so a timestamp after {@link #MICRO_TIMESTAMP_END} arrives as
     * {@code Long.MAX_VALUE} (no fraction) or as a number just above {@code Long.MIN_VALUE} (the
     * fraction, less one), far below PostgreSQL's first timestamp. Which timestamp it was is lost
     * (every later second gives the same number), so such a value is refused, not guessed.
     * Debezium writes {@code infinity} as pgjdbc's sentinels, never as the extreme longs.
     */
    static final ValueConverter TIMESTAMP_MICROS = value -> {
        long micros = ((Number) value).longValue();
        if (micros == TIMESTAMP_POSITIVE_INFINITY_MICROS) {
            return "infinity";
        }
        if (micros == TIMESTAMP_NEGATIVE_INFINITY_MICROS) {
            return "-infinity";
        }
        if (micros == Long.MAX_VALUE || micros < POSTGRESQL_MIN_TIMESTAMP_MICROS) {
            throw new IllegalArgumentException("a timestamp after " + MICRO_TIMESTAMP_END
                    + ": Debezium's io.debezium.time.MicroTimestamp (microseconds since 1970 in a long) cannot hold it"
                    + " and sent a number that is no PostgreSQL timestamp, so the value is lost;"
                    + " copy this row by hand");
        }
        return localDateTime(Math.floorDiv(micros, 1_000_000), Math.floorMod(micros, 1_000_000) * 1_000L);
    };

    static final ValueConverter TIMESTAMP_NANOS = value -> {
        long nanos = ((Number) value).longValue();
        if (nanos == Long.MAX_VALUE) {
            return "infinity";
        }
        if (nanos == Long.MIN_VALUE) {
            return "-infinity";
        }
        return localDateTime(Math.floorDiv(nanos, 1_000_000_000), Math.floorMod(nanos, 1_000_000_000));
    };

    /**
     * A {@code timestamp} column sent as PostgreSQL's text ({@link TimestampText}): to the
     * {@code LocalDateTime} the column's other encodings become, so keys of one row meet and binary
     * COPY takes it; {@code infinity}, and text of another form, are passed on for PostgreSQL to read.
     */
    static final ValueConverter POSTGRES_TIMESTAMP_TEXT = value -> {
        String text = (String) value;
        return TimestampText.parse(text).<Object>map(timestamp -> timestamp).orElse(text);
    };

    static final ValueConverter ZONED_TIMESTAMP_TEXT = value -> {
        String text = (String) value;
        if (text.equals("infinity") || text.equals("-infinity")) {
            return text;
        }
        OffsetDateTime utc = utcTimestamp(text);
        return utc != null ? utc : OffsetDateTime.parse(text);
    };

    static final ValueConverter ZONED_TIME_TEXT = value -> OffsetTime.parse((String) value);

    static final ValueConverter MICRO_DURATION_MICROS = value -> ((Number) value).longValue() + " microseconds";

    static final ValueConverter CONNECT_DATE_VALUE = value ->
            LocalDate.ofInstant(((java.util.Date) value).toInstant(), ZoneOffset.UTC);
    static final ValueConverter CONNECT_TIME_VALUE = value ->
            LocalTime.ofNanoOfDay(Math.floorMod(((java.util.Date) value).getTime(), 86_400_000L) * 1_000_000L);
    static final ValueConverter CONNECT_TIMESTAMP_VALUE = value ->
            LocalDateTime.ofInstant(((java.util.Date) value).toInstant(), ZoneOffset.UTC);

    private TemporalConverters() {}

    /**
     * {@code yyyy-MM-ddTHH:mm:ss[.f]Z}, the form Debezium gives every {@code timestamptz} in, read
     * without {@code DateTimeFormatter}, whose parse copies its state for each optional section:
     * a quarter of the allocation of the engine's consumer thread on a table with one timestamptz
     * column. The same value {@code OffsetDateTime.parse} returns; null for any other form or an
     * invalid date or time, which that then reads or rejects.
     */
    @Nullable
    static OffsetDateTime utcTimestamp(String text)
    {
        int length = text.length();
        if (length < 20 || length == 21 || length > 30 || text.charAt(length - 1) != 'Z') {
            return null;
        }
        if (text.charAt(4) != '-' || text.charAt(7) != '-' || text.charAt(10) != 'T' || text.charAt(13) != ':'
                || text.charAt(16) != ':' || (length > 20 && text.charAt(19) != '.')) {
            return null;
        }
        int year = digits(text, 0, 4);
        int month = digits(text, 5, 7);
        int day = digits(text, 8, 10);
        int hour = digits(text, 11, 13);
        int minute = digits(text, 14, 16);
        int second = digits(text, 17, 19);
        int nanos = 0;
        if (length > 20) {
            nanos = digits(text, 20, length - 1);
            for (int scale = length - 21; scale < 9 && nanos >= 0; scale++) {
                nanos *= 10;
            }
        }
        if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || nanos < 0) {
            return null;
        }
        try {
            return OffsetDateTime.of(year, month, day, hour, minute, second, nanos, ZoneOffset.UTC);
        }
        catch (DateTimeException e) {
            return null;
        }
    }

    /** The number the ASCII digits of {@code text} from {@code start} to {@code end} (at most 9) spell;
            -1 when one is not a digit. */
    private static int digits(String text, int start, int end)
    {
        int value = 0;
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }

    @SuppressWarnings("deprecation")
    private static long arrayInfinityDays(long sentinel)
    {
        // pgjdbc's date infinity sentinels are the same numbers as its timestamp ones, in milliseconds
        return (int) new java.sql.Date(sentinel).toLocalDate().toEpochDay();
    }

    private static Object timeOfDay(long micros)
    {
        if (micros == MICROS_PER_DAY) {
            return END_OF_DAY;
        }
        return LocalTime.ofNanoOfDay(micros * 1_000);
    }

    private static LocalDateTime localDateTime(long epochSeconds, long nanos)
    {
        return LocalDateTime.ofEpochSecond(epochSeconds, (int) nanos, ZoneOffset.UTC);
    }
}
