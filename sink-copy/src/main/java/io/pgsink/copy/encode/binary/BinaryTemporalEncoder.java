package io.pgsink.copy.encode.binary;

import io.pgsink.copy.encode.text.DateTimeText;
import io.pgsink.copy.write.BinaryCopyWriter;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;

/**
 * date, time, timetz, timestamp and timestamptz in their binary forms: days (int32) or
 * microseconds (int64) since 2000-01-01, microseconds of the day, and for timetz the zone in
 * seconds west of UTC; offsets PostgreSQL does not read (16 hours or more) go the CSV way. The texts the adapters send
 * for values java.time cannot hold are written too: {@code infinity} and {@code -infinity} (the extreme values of the
 * wire format) and {@code 24:00:00}. Values far outside PostgreSQL's range go the CSV way, where the server's
 * parser refuses them with its usual message; nanoseconds are refused as in CSV.
 */
enum BinaryTemporalEncoder
        implements BinaryValueEncoder
{
    DATE("date") {
        @Override
        public boolean accepts(Object value)
        {
            if (value instanceof LocalDate date) {
                // days since 2000 in an int32, short of the infinity values at its ends (PostgreSQL's dates end in
                // 5874897)
                long days = date.toEpochDay() - POSTGRES_EPOCH_DAY;
                return days > Integer.MIN_VALUE && days < Integer.MAX_VALUE;
            }
            return isInfinity(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof LocalDate date) {
                out.writeInt((int) (date.toEpochDay() - POSTGRES_EPOCH_DAY));
            }
            else {
                out.writeInt(value.equals(INFINITY) ? Integer.MAX_VALUE : Integer.MIN_VALUE);
            }
        }
    },
    TIME("time") {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof LocalTime || END_OF_DAY.equals(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof LocalTime time) {
                out.writeLong(micros(time.toNanoOfDay(), time.getNano()));
            }
            else {
                out.writeLong(MICROS_PER_DAY);
            }
        }
    },
    TIMETZ("timetz") {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof OffsetTime time && inPostgresRange(time.getOffset());
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            OffsetTime time = (OffsetTime) value;
            out.writeTimeWithZone(micros(time.toLocalTime().toNanoOfDay(), time.getNano()),
                    -time.getOffset().getTotalSeconds());
        }
    },
    TIMESTAMP("timestamp") {
        @Override
        public boolean accepts(Object value)
        {
            if (value instanceof LocalDateTime timestamp) {
                return Math.abs(timestamp.getYear()) <= MAX_TIMESTAMP_YEARS;
            }
            return isInfinity(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof LocalDateTime timestamp) {
                out.writeLong(sincePostgresEpoch(timestamp.toEpochSecond(ZoneOffset.UTC), timestamp.getNano()));
            }
            else {
                out.writeLong(value.equals(INFINITY) ? Long.MAX_VALUE : Long.MIN_VALUE);
            }
        }
    },
    TIMESTAMPTZ("timestamptz") {
        @Override
        public boolean accepts(Object value)
        {
            if (value instanceof OffsetDateTime timestamp) {
                return Math.abs(timestamp.getYear()) <= MAX_TIMESTAMP_YEARS && inPostgresRange(timestamp.getOffset());
            }
            if (value instanceof ZonedDateTime timestamp) {
                return Math.abs(timestamp.getYear()) <= MAX_TIMESTAMP_YEARS && inPostgresRange(timestamp.getOffset());
            }
            if (value instanceof Instant instant) {
                return Math.abs(instant.getEpochSecond()) <= MAX_TIMESTAMP_YEARS * 31_557_600L;
            }
            return isInfinity(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof OffsetDateTime timestamp) {
                out.writeLong(sincePostgresEpoch(timestamp.toEpochSecond(), timestamp.getNano()));
            }
            else if (value instanceof ZonedDateTime timestamp) {
                out.writeLong(sincePostgresEpoch(timestamp.toEpochSecond(), timestamp.getNano()));
            }
            else if (value instanceof Instant instant) {
                out.writeLong(sincePostgresEpoch(instant.getEpochSecond(), instant.getNano()));
            }
            else {
                out.writeLong(value.equals(INFINITY) ? Long.MAX_VALUE : Long.MIN_VALUE);
            }
        }
    };

    private static final long POSTGRES_EPOCH_DAY = LocalDate.of(2000, 1, 1).toEpochDay();
    private static final long POSTGRES_EPOCH_SECOND = POSTGRES_EPOCH_DAY * 86_400;
    private static final long MICROS_PER_DAY = 86_400_000_000L;
    /** Keeps microseconds since 2000 within an int64 (PostgreSQL's timestamps end in 294276). */
    private static final int MAX_TIMESTAMP_YEARS = 280_000;
    private static final int MAX_OFFSET_SECONDS = 16 * 3600;
    private static final String INFINITY = "infinity";
    private static final String NEGATIVE_INFINITY = "-infinity";
    private static final String END_OF_DAY = "24:00:00";

    private final String typeName;

    BinaryTemporalEncoder(String typeName)
    {
        this.typeName = typeName;
    }

    /**
     * PostgreSQL's text input refuses offsets of 16 hours or more (java.time allows 18): such a
     * value goes the CSV way, to be refused the same way, rather than written as its instant.
     */
    private static boolean inPostgresRange(ZoneOffset offset)
    {
        return Math.abs(offset.getTotalSeconds()) < MAX_OFFSET_SECONDS;
    }

    private static boolean isInfinity(Object value)
    {
        return INFINITY.equals(value) || NEGATIVE_INFINITY.equals(value);
    }

    /** Microseconds from nanoseconds, refusing a sub-microsecond part as CSV does. */
    long micros(long nanos, int nanoOfSecond)
    {
        DateTimeText.checkMicroseconds(nanoOfSecond, typeName);
        return nanos / 1_000;
    }

    long sincePostgresEpoch(long epochSecond, int nanoOfSecond)
    {
        DateTimeText.checkMicroseconds(nanoOfSecond, typeName);
        return (epochSecond - POSTGRES_EPOCH_SECOND) * 1_000_000 + nanoOfSecond / 1_000;
    }
}
