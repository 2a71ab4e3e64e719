package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.time.LocalTime;

/** time: {@link LocalTime}. {@code 24:00:00}, which LocalTime cannot hold, arrives as a string. */
final class TimeEncoder
        extends TextFormEncoder
{
    TimeEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof LocalTime time)) {
            throw unsupported(value);
        }
        DateTimeText.appendTime(out, time.getHour(), time.getMinute(), time.getSecond(), time.getNano(), typeName());
    }
}
