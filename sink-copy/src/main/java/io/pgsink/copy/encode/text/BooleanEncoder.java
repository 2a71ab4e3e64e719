package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

/** bool: {@link Boolean}, written {@code t} or {@code f}. */
final class BooleanEncoder
        extends TextFormEncoder
{
    BooleanEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof Boolean bool) {
            out.appendAscii(bool ? 't' : 'f');
            return;
        }
        throw unsupported(value);
    }
}
