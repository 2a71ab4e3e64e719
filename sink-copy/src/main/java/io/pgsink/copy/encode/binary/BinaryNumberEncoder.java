package io.pgsink.copy.encode.binary;

import io.pgsink.copy.write.BinaryCopyWriter;

import java.math.BigInteger;

/**
 * int2, int4, int8, oid, float4, float8 and bool in their binary forms. Integers are range-checked
 * (a value out of range goes the CSV way, whose encoder names the range); a float column takes
 * what converts exactly as the server's parser of the CSV text would round it: a float4 from a
 * {@link Float} or a {@link Double} that is a float, a float8 from a {@link Double} or from a
 * {@link Float} as its decimal text (0.1f reads back 0.1, as in CSV), and either from Java
 * integers (Java's conversion and the server's parser both round to nearest).
 */
enum BinaryNumberEncoder
        implements BinaryValueEncoder
{
    INT2(Short.MIN_VALUE, Short.MAX_VALUE) {
        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeShort((short) integer(value));
        }
    },
    INT4(Integer.MIN_VALUE, Integer.MAX_VALUE) {
        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeInt((int) integer(value));
        }
    },
    INT8(Long.MIN_VALUE, Long.MAX_VALUE) {
        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeLong(integer(value));
        }
    },
    /** Unsigned 32 bits on the wire. */
    OID(0, 0xFFFF_FFFFL) {
        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeInt((int) integer(value));
        }
    },
    FLOAT4(0, 0) {
        @Override
        public boolean accepts(Object value)
        {
            if (value instanceof Double number) {
                double d = number;
                return Double.isNaN(d) || (double) (float) d == d;
            }
            return value instanceof Float || isJavaInteger(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeFloat(((Number) value).floatValue());
        }
    },
    FLOAT8(0, 0) {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof Double || value instanceof Float || isJavaInteger(value);
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            if (value instanceof Float number) {
                // as CSV writes it: the float's shortest decimal text, read as a double
                out.writeDouble(Double.parseDouble(Float.toString(number)));
            }
            else {
                out.writeDouble(((Number) value).doubleValue());
            }
        }
    },
    BOOL(0, 0) {
        @Override
        public boolean accepts(Object value)
        {
            return value instanceof Boolean;
        }

        @Override
        public void encode(Object value, BinaryCopyWriter out)
        {
            out.writeBoolean((Boolean) value);
        }
    };

    private final long min;
    private final long max;

    BinaryNumberEncoder(long min, long max)
    {
        this.min = min;
        this.max = max;
    }

    /** The integer types: a Java integer within the column type's range. */
    @Override
    public boolean accepts(Object value)
    {
        long number;
        if (isJavaInteger(value)) {
            number = ((Number) value).longValue();
        }
        else if (value instanceof BigInteger big && big.bitLength() <= 63) {
            number = big.longValue();
        }
        else {
            return false;
        }
        return number >= min && number <= max;
    }

    static boolean isJavaInteger(Object value)
    {
        return value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte;
    }

    private static long integer(Object value)
    {
        return ((Number) value).longValue();
    }
}
