package io.pgsink.copy.encode.binary;

import io.pgsink.copy.write.BinaryCopyWriter;

import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * numeric in its binary form: the number of base-10000 digits, the weight of the first, the sign
 * ({@code NaN} and, from PostgreSQL 14, {@code ±Infinity} are signs of their own), the display
 * scale, then the digits. The display scale is the {@link BigDecimal}'s scale (at least 0), exactly
 * as the CSV path's {@link BigDecimal#toPlainString()} gives it; {@link Double}s and {@link Float}s
 * go through their decimal text as in CSV, so 1.5 stays 1.5 and 1e300 has 301 digits. The server
 * applies the column's precision and scale as its text input does. Strings are accepted when they
 * are {@code NaN}, {@code Infinity}, {@code -Infinity} or plain decimals ({@code -12.50}).
 *
 * <p>Numbers whose unscaled value has at most 15 digits (prices, amounts) are split into base-10000
 * digits arithmetically, without allocating; longer ones through their plain text.
 */
final class BinaryNumericEncoder
        implements BinaryValueEncoder
{
    static final BinaryNumericEncoder INSTANCE = new BinaryNumericEncoder();

    private static final int POSITIVE = 0x0000;
    private static final int NEGATIVE = 0x4000;
    private static final int NAN = 0xC000;
    private static final int POSITIVE_INFINITY = 0xD000;
    private static final int NEGATIVE_INFINITY = 0xF000;
    /** PostgreSQL's largest display scale. */
    private static final int MAX_SCALE = 0x3FFF;
    /** Keeps the digit count within an int16 (PostgreSQL's text input takes up to 131072 digits before the point). */
    private static final int MAX_INTEGER_DIGITS = 100_000;
    private static final int FAST_PRECISION = 15;
    private static final long FAST_MAX = 999_999_999_999_999L;
    private static final long[] POWERS_OF_TEN = {1, 10, 100, 1000};
    private static final long[] POWERS_OF_10000 = {1, 10_000, 100_000_000, 1_000_000_000_000L, 10_000_000_000_000_000L};

    private BinaryNumericEncoder() {}

    @Override
    public boolean accepts(Object value)
    {
        if (value instanceof BigDecimal decimal) {
            return decimal.scale() <= MAX_SCALE && decimal.precision() - (long) decimal.scale() <= MAX_INTEGER_DIGITS;
        }
        if (BinaryNumberEncoder.isJavaInteger(value) || value instanceof Double || value instanceof Float) {
            return true;
        }
        if (value instanceof BigInteger integer) {
            return integer.bitLength() < MAX_INTEGER_DIGITS * 3;
        }
        if (value instanceof String text) {
            return text.equals("NaN") || text.equals("Infinity") || text.equals("-Infinity") || isPlainDecimal(text);
        }
        return false;
    }

    @Override
    public void encode(Object value, BinaryCopyWriter out)
    {
        if (value instanceof BigDecimal decimal) {
            encodeDecimal(decimal, out);
        }
        else if (BinaryNumberEncoder.isJavaInteger(value)) {
            long number = ((Number) value).longValue();
            if (number >= -FAST_MAX && number <= FAST_MAX) {
                encodeFast(number, 0, out);
            }
            else {
                encodeText(BigDecimal.valueOf(number), out);
            }
        }
        else if (value instanceof Double number) {
            encodeDouble(number, Double.toString(number), out);
        }
        else if (value instanceof Float number) {
            encodeDouble(number, Float.toString(number), out);
        }
        else if (value instanceof BigInteger integer) {
            encodeDecimal(new BigDecimal(integer), out);
        }
        else {
            switch ((String) value) {
                case "NaN" -> special(NAN, out);
                case "Infinity" -> special(POSITIVE_INFINITY, out);
                case "-Infinity" -> special(NEGATIVE_INFINITY, out);
                default -> encodeDecimal(new BigDecimal((String) value), out);
            }
        }
    }

    private static void encodeDouble(double number, String text, BinaryCopyWriter out)
    {
        if (Double.isNaN(number)) {
            special(NAN, out);
        }
        else if (Double.isInfinite(number)) {
            special(number > 0 ? POSITIVE_INFINITY : NEGATIVE_INFINITY, out);
        }
        else {
            encodeDecimal(new BigDecimal(text), out);
        }
    }

    private static void encodeDecimal(BigDecimal decimal, BinaryCopyWriter out)
    {
        int scale = decimal.scale();
        if (scale >= 0 && decimal.precision() <= FAST_PRECISION) {
            encodeFast(decimal.unscaledValue().longValue(), scale, out);
        }
        else {
            encodeText(decimal, out);
        }
    }

    /** {@code unscaled / 10^scale} with |unscaled| at most 15 digits: base-10000 digits by arithmetic. */
    private static void encodeFast(long unscaled, int scale, BinaryCopyWriter out)
    {
        boolean negative = unscaled < 0;
        long magnitude = Math.abs(unscaled);
        // align the fraction on whole base-10000 digits: at most 18 decimal digits, still a long
        int padding = (4 - scale % 4) % 4;
        long aligned = magnitude * POWERS_OF_TEN[padding];
        int fractionDigits = (scale + padding) / 4;
        int digits = 0;
        for (long rest = aligned; rest > 0; rest /= 10_000) {
            digits++;
        }
        out.beginField();
        out.appendShort(digits);
        out.appendShort(digits - 1 - fractionDigits);
        out.appendShort(negative ? NEGATIVE : POSITIVE);
        out.appendShort(scale);
        for (int i = digits - 1; i >= 0; i--) {
            out.appendShort((int) ((aligned / POWERS_OF_10000[i]) % 10_000));
        }
        out.endField();
    }

    /**
     * Any {@link BigDecimal}, through its plain text: integer digits grouped from the point leftwards, fraction digits
     * rightwards.
     */
    private static void encodeText(BigDecimal decimal, BinaryCopyWriter out)
    {
        String plain = decimal.toPlainString();
        boolean negative = plain.charAt(0) == '-';
        int start = negative ? 1 : 0;
        int point = plain.indexOf('.');
        int integerEnd = point < 0 ? plain.length() : point;
        // leading zeros of the integer part carry nothing
        while (start < integerEnd - 1 && plain.charAt(start) == '0') {
            start++;
        }
        int integerDigits = integerEnd - start;
        int scale = point < 0 ? 0 : plain.length() - point - 1;
        int integerGroups = (integerDigits + 3) / 4;
        int fractionGroups = (scale + 3) / 4;
        out.beginField();
        out.appendShort(integerGroups + fractionGroups);
        out.appendShort(integerGroups - 1);
        out.appendShort(negative ? NEGATIVE : POSITIVE);
        out.appendShort(scale);
        // the first group takes the digits left over by groups of four
        int position = start - (integerGroups * 4 - integerDigits);
        for (int group = 0; group < integerGroups; group++, position += 4) {
            out.appendShort(digits(plain, position, start, integerEnd));
        }
        for (int group = 0, from = point + 1; group < fractionGroups; group++, from += 4) {
            out.appendShort(digits(plain, from, from, plain.length()));
        }
        out.endField();
    }

    /** The four decimal digits at {@code from}, counting positions outside [{@code first}, {@code end}) as zeros. */
    private static int digits(String text, int from, int first, int end)
    {
        int value = 0;
        for (int i = from; i < from + 4; i++) {
            value = value * 10 + (i >= first && i < end ? text.charAt(i) - '0' : 0);
        }
        return value;
    }

    private static void special(int sign, BinaryCopyWriter out)
    {
        out.beginField();
        out.appendShort(0);
        out.appendShort(0);
        out.appendShort(sign);
        out.appendShort(0);
        out.endField();
    }

    /** {@code -?digits(.digits)?} with at least one digit, as Debezium's string mode sends numerics. */
    private static boolean isPlainDecimal(String text)
    {
        int start = text.startsWith("-") ? 1 : 0;
        boolean digit = false;
        boolean point = false;
        for (int i = start; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                digit = true;
            }
            else if (c == '.' && !point) {
                point = true;
            }
            else {
                return false;
            }
        }
        return digit && text.length() - start <= MAX_INTEGER_DIGITS;
    }
}
