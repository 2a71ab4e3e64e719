package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.nio.ByteBuffer;

/**
 * bytea: {@code byte[]} or {@link ByteBuffer} (its remaining bytes; its position is not moved),
 * written in hex format. A String is taken as bytea text form ({@code \x...} or escape format).
 */
final class ByteaEncoder
        extends TextFormEncoder
{
    ByteaEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof byte[] bytes) {
            out.appendBytea(bytes, 0, bytes.length);
        }
        else if (value instanceof ByteBuffer bytes) {
            out.appendBytea(bytes);
        }
        else {
            throw unsupported(value);
        }
    }
}
