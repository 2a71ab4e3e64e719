package io.pgsink.copy.encode.binary;

import io.pgsink.copy.write.BinaryCopyWriter;

import java.nio.ByteBuffer;
import java.util.UUID;

/**
 * Types whose binary form is their text or their bytes: text, varchar, bpchar and json (UTF-8, the
 * server's receive function checks and applies the type modifier as its text input does), jsonb
 * (version byte 1, then the text), bytea (the bytes) and uuid (16 bytes).
 */
enum BinaryTextEncoder
        implements BinaryValueEncoder
{
    TEXT {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof CharSequence;
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeText((CharSequence) value);
        }
    },
    JSONB {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof CharSequence;
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeJsonb((CharSequence) value);
        }
    },
    BYTEA {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof byte[] || value instanceof ByteBuffer;
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof byte[] bytes) {
                out.writeBytes(bytes, 0, bytes.length);
            }
            else {
                out.writeBytes((ByteBuffer) value);
            }
        }
    },
    UUID_BYTES {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof UUID;
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            UUID uuid = (UUID) value;
            out.writeUuid(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
        }
    },
}
