package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.ValueEncodingException;

import java.util.HashMap;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * Finds the encoder for a PostgreSQL type. Resolve once per column (per table schema version) and
 * keep the encoders in an array: the per-row loop must not look anything up.
 *
 * <p>Java value conventions, the contract with the adapters that build rows:
 * <table>
 * <caption>Accepted Java classes per PostgreSQL type</caption>
 * <tr><th>PostgreSQL type</th><th>Java value</th></tr>
 * <tr><td>int2, int4, int8, oid</td><td>Byte, Short, Integer, Long, BigInteger (range-checked)</td></tr>
 * <tr><td>float4, float8</td><td>Float, Double, any Number</td></tr>
 * <tr><td>numeric</td><td>BigDecimal, Byte, Short, Integer, Long, BigInteger, Double, Float (NaN and infinities
 * included)</td></tr>
 * <tr><td>bool</td><td>Boolean</td></tr>
 * <tr><td>bytea</td><td>byte[], ByteBuffer</td></tr>
 * <tr><td>date</td><td>LocalDate</td></tr>
 * <tr><td>time / timetz</td><td>LocalTime / OffsetTime</td></tr>
 * <tr><td>timestamp / timestamptz</td><td>LocalDateTime / OffsetDateTime, ZonedDateTime, Instant</td></tr>
 * <tr><td>uuid</td><td>UUID</td></tr>
 * <tr><td>{@code _}<i>element</i> (arrays)</td><td>List of element values, nested Lists for more dimensions</td></tr>
 * <tr><td>text, varchar, bpchar, name, json, jsonb, xml, citext, any other type</td><td>CharSequence</td></tr>
 * </table>
 * Every type also accepts a String holding the value's PostgreSQL text form (intervals, ranges,
 * network and geometric types, money, bit strings, infinite dates...). Any other class is refused
 * with a {@link ValueEncodingException} naming the class and the type.
 */
public final class ValueEncoders
{
    private static final Map<String, TextFormEncoder> ENCODERS = new HashMap<>();

    static {
        register(new IntegerEncoder("int2", Short.MIN_VALUE, Short.MAX_VALUE));
        register(new IntegerEncoder("int4", Integer.MIN_VALUE, Integer.MAX_VALUE));
        register(new IntegerEncoder("int8", Long.MIN_VALUE, Long.MAX_VALUE));
        register(new IntegerEncoder("oid", 0, 0xFFFF_FFFFL));
        register(new FloatEncoder("float4"));
        register(new FloatEncoder("float8"));
        register(new NumericEncoder("numeric"));
        register(new BooleanEncoder("bool"));
        register(new ByteaEncoder("bytea"));
        register(new DateEncoder("date"));
        register(new TimeEncoder("time"));
        register(new TimeWithTimeZoneEncoder("timetz"));
        register(new TimestampEncoder("timestamp"));
        register(new TimestampWithTimeZoneEncoder("timestamptz"));
        register(new UuidEncoder("uuid"));
        for (String text
                : new String[] {"text", "varchar", "bpchar", "char", "name", "json", "jsonb", "xml", "citext"}) {
            register(new TextEncoder(text));
        }
    }

    private ValueEncoders() {}

    /**
     * Returns the encoder for {@code typeName}, a {@code pg_type.typname} such as {@code int8},
     * {@code varchar}, {@code timestamptz} or {@code _int4} (an array of int4). A type without its
     * own encoder (enum, domain, range, interval...) gets the text encoder.
     */
    public static ValueEncoder forType(String typeName)
    {
        return resolve(requireNonNull(typeName, "typeName is null"));
    }

    private static TextFormEncoder resolve(String typeName)
    {
        TextFormEncoder encoder = ENCODERS.get(typeName);
        if (encoder != null) {
            return encoder;
        }
        if (typeName.length() > 1 && typeName.charAt(0) == '_') {
            String elementType = typeName.substring(1);
            return new ArrayEncoder(typeName, resolve(elementType), elementType.equals("box") ? ';' : ',');
        }
        return new TextEncoder(typeName);
    }

    private static void register(TextFormEncoder encoder)
    {
        ENCODERS.put(encoder.typeName(), encoder);
    }
}
