package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;

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
    /** Unscaled values of at most 18 digits fit a long. */
    private static final int MAX_FAST_PRECISION = 18;
    private static final int MAX_FAST_SCALE = 18;

    NumericEncoder(String typeName)
    {
        super(typeName);
    }

    @Override
    void appendValue(Object value, CsvWriter out)
    {
        if (value instanceof BigDecimal decimal) {
            int scale = decimal.scale();
            if (scale >= 0 && scale <= MAX_FAST_SCALE && decimal.precision() <= MAX_FAST_PRECISION) {
                // the digits straight from the unscaled long: one small BigInteger instead of
                // toPlainString's strings and builder (BigDecimal offers no allocation-free access)
                out.appendDecimal(decimal.unscaledValue().longValue(), scale);
            }
            else {
                out.appendAscii(decimal.toPlainString());
            }
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
