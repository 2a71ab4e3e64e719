package io.pgsink.copy;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * numeric: {@link BigDecimal} (written with {@link BigDecimal#toPlainString()}, so that the scale,
 * trailing zeros included, is what PostgreSQL keeps as the display scale), integers, and
 * {@link Double}/{@link Float}, whose NaN and infinities PostgreSQL 14+ numeric accepts.
 */
final class NumericEncoder
        extends TextFormEncoder
{
    NumericEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof BigDecimal decimal) {
            // allocates a String; BigDecimal offers no allocation-free access to its digits
            out.appendAscii(decimal.toPlainString());
        }
        else if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
            out.appendLong(((Number) value).longValue());
        }
        else if (value instanceof BigInteger integer) {
            out.appendAscii(integer.toString());
        }
        else if (value instanceof Double number) {
            out.appendDouble(number);
        }
        else if (value instanceof Float number) {
            out.appendFloat(number);
        }
        else {
            throw unsupported(value);
        }
    }
}
