package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.time.LocalDateTime;

/** timestamp: {@link LocalDateTime}, {@code YYYY-MM-DD HH:MM:SS[.ffffff][ BC]}. */
final class TimestampEncoder
        extends TextFormEncoder
{
    TimestampEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof LocalDateTime timestamp)) {
            throw unsupported(value);
        }
        boolean bc = DateTimeText.appendDate(out, timestamp.getYear(), timestamp.getMonthValue(),
                timestamp.getDayOfMonth());
        out.appendAscii(' ');
        DateTimeText.appendTime(out, timestamp.getHour(), timestamp.getMinute(), timestamp.getSecond(),
                timestamp.getNano(), typeName());
        if (bc) {
            DateTimeText.appendBc(out);
        }
    }
}
