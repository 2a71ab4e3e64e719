package io.pgsink.copy;

import java.time.Instant;
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
            boolean bc = DateTimeText.appendDate(out, timestamp.getYear(), timestamp.getMonthValue(), timestamp.getDayOfMonth());
            out.appendAscii(' ');
            DateTimeText.appendTime(out, timestamp.getHour(), timestamp.getMinute(), timestamp.getSecond(), timestamp.getNano(), typeName());
            DateTimeText.appendOffset(out, timestamp.getOffset().getTotalSeconds());
            if (bc) {
                DateTimeText.appendBc(out);
            }
        }
        else if (value instanceof ZonedDateTime timestamp) {
            boolean bc = DateTimeText.appendDate(out, timestamp.getYear(), timestamp.getMonthValue(), timestamp.getDayOfMonth());
            out.appendAscii(' ');
            DateTimeText.appendTime(out, timestamp.getHour(), timestamp.getMinute(), timestamp.getSecond(), timestamp.getNano(), typeName());
            DateTimeText.appendOffset(out, timestamp.getOffset().getTotalSeconds());
            if (bc) {
                DateTimeText.appendBc(out);
            }
        }
        else if (value instanceof Instant instant) {
            DateTimeText.appendInstant(out, instant.getEpochSecond(), instant.getNano(), typeName());
        }
        else {
            throw unsupported(value);
        }
    }
}
