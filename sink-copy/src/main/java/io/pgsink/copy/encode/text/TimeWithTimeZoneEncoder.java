package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.time.OffsetTime;

/** timetz: {@link OffsetTime}, written with its offset. */
final class TimeWithTimeZoneEncoder
        extends TextFormEncoder
{
    TimeWithTimeZoneEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof OffsetTime time)) {
            throw unsupported(value);
        }
        DateTimeText.appendTime(out, time.getHour(), time.getMinute(), time.getSecond(), time.getNano(), typeName());
        DateTimeText.appendOffset(out, time.getOffset().getTotalSeconds());
    }
}
