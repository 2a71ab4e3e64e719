package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * float4 and float8. A {@link Float} is written with {@link Float#toString(float)} and a
 * {@link Double} with {@link Double#toString(double)}, whatever the column: both parse back to
 * exactly the value they came from, and a float4 source value written to a float8 column reads
 * back as the same decimal text as on the source (0.1, not 0.10000000149011612). Integers and
 * decimals are written exactly and rounded by the server; other {@link Number}s go through
 * {@link Number#doubleValue()}.
 */
final class FloatEncoder
        extends TextFormEncoder
{
    FloatEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof Double number) {
            out.appendDouble(number);
        }
        else if (value instanceof Float number) {
            out.appendFloat(number);
        }
        else if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            out.appendLong(((Number) value).longValue());
        }
        else if (value instanceof BigDecimal || value instanceof BigInteger) {
            out.appendAscii(value.toString());
        }
        else if (value instanceof Number number) {
            out.appendDouble(number.doubleValue());
        }
        else {
            throw unsupported(value);
        }
    }
}
