package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;

/**
 * timestamptz: {@link OffsetDateTime}, {@link ZonedDateTime} or {@link Instant}, always written with
 * an explicit offset so that the session's TimeZone setting cannot change the instant.
 */
final class TimestampWithTimeZoneEncoder
        extends TextFormEncoder
{
    TimestampWithTimeZoneEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof OffsetDateTime timestamp) {
            appendLocal(out, timestamp.toLocalDateTime(), timestamp.getOffset().getTotalSeconds());
        }
        else if (value instanceof ZonedDateTime timestamp) {
            appendLocal(out, timestamp.toLocalDateTime(), timestamp.getOffset().getTotalSeconds());
        }
        else if (value instanceof Instant instant) {
            DateTimeText.appendInstant(out, instant.getEpochSecond(), instant.getNano(), typeName());
        }
        else {
            throw unsupported(value);
        }
    }

    /** The wall-clock time as written where it was taken, followed by its offset. */
    private void appendLocal(CsvWriter out, LocalDateTime local, int offsetSeconds)
    {
        boolean bc = DateTimeText.appendDate(out, local.getYear(), local.getMonthValue(), local.getDayOfMonth());
        out.appendAscii(' ');
        DateTimeText.appendTime(out, local.getHour(), local.getMinute(), local.getSecond(), local.getNano(),
                typeName());
        DateTimeText.appendOffset(out, offsetSeconds);
        if (bc) {
            DateTimeText.appendBc(out);
        }
    }
}
