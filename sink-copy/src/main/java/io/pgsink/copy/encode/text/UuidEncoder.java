package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.util.UUID;

/** uuid: {@link UUID}, written as 36 lowercase characters straight from its two longs. */
final class UuidEncoder
        extends TextFormEncoder
{
    UuidEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (!(value instanceof UUID uuid)) {
            throw unsupported(value);
        }
        long high = uuid.getMostSignificantBits();
        long low = uuid.getLeastSignificantBits();
        out.appendHex(high >>> 32, 8);
        out.appendAscii('-');
        out.appendHex(high >>> 16, 4);
        out.appendAscii('-');
        out.appendHex(high, 4);
        out.appendAscii('-');
        out.appendHex(low >>> 48, 4);
        out.appendAscii('-');
        out.appendHex(low, 12);
    }
}
