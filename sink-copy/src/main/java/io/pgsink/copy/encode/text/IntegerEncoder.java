package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;

import java.math.BigInteger;

/**
 * int2, int4, int8 (and oid): {@link Byte}, {@link Short}, {@link Integer}, {@link Long} or
 * {@link BigInteger}, range-checked here so that an overflow names the column instead of failing
 * the whole COPY.
 */
final class IntegerEncoder
        extends TextFormEncoder
{
    private final long min;
    private final long max;

    IntegerEncoder(String typeName, long min, long max)
    {
        super(typeName);
        this.min = min;
        this.max = max;
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        long number;
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            number = ((Number) value).longValue();
        }
        else if (value instanceof BigInteger big) {
            if (big.bitLength() > 63) {
                throw outOfRange();
            }
            number = big.longValue();
        }
        else {
            throw unsupported(value);
        }
        if (number < min || number > max) {
            throw outOfRange();
        }
        out.appendLong(number);
    }

    private ValueEncodingException outOfRange()
    {
        return new ValueEncodingException("integer value out of range for PostgreSQL type " + typeName() + " [" + min
                + ", " + max + "]");
    }
}
