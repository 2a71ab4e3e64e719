package io.pgsink.copy.encode.binary;

import java.util.Map;
import java.util.Optional;

import static java.util.Map.entry;
import static java.util.Objects.requireNonNull;

/**
 * Finds the binary encoder of a PostgreSQL type, by {@code pg_type.typname} (of a domain's base
 * type), once per column. The types with one, and the Java values each writes in binary (anything
 * else is written as CSV, see {@link BinaryValueEncoder#accepts}):
 * <table>
 * <caption>Types written in binary</caption>
 * <tr><th>PostgreSQL type</th><th>Java value</th></tr>
 * <tr><td>int2, int4, int8, oid</td><td>Byte, Short, Integer, Long, BigInteger, within range</td></tr>
 * <tr><td>float4, float8</td><td>Float, Double, Java integers (a float4 only from a Double that is a float)</td></tr>
 * <tr><td>numeric</td><td>BigDecimal, BigInteger, Java integers, Double, Float, and the strings NaN, ±Infinity and
 * plain decimals</td></tr>
 * <tr><td>bool</td><td>Boolean</td></tr>
 * <tr><td>text, varchar, bpchar, json, jsonb</td><td>CharSequence</td></tr>
 * <tr><td>bytea</td><td>byte[], ByteBuffer</td></tr>
 * <tr><td>uuid</td><td>UUID</td></tr>
 * <tr><td>date, time, timetz, timestamp, timestamptz</td><td>as for CSV, plus the strings infinity, -infinity (dates,
 * timestamps) and 24:00:00 (time)</td></tr>
 * </table>
 * Every other type has none: arrays (their binary form names the element type's OID), ranges,
 * intervals (which the adapters send as text), enums, network, geometric and bit-string types,
 * money, xml, name, "char", citext and extension types. A COPY with such a column is written as CSV.
 */
public final class BinaryValueEncoders
{
    private static final Map<String, BinaryValueEncoder> ENCODERS = Map.ofEntries(
            entry("int2", BinaryNumberEncoder.INT2),
            entry("int4", BinaryNumberEncoder.INT4),
            entry("int8", BinaryNumberEncoder.INT8),
            entry("oid", BinaryNumberEncoder.OID),
            entry("float4", BinaryNumberEncoder.FLOAT4),
            entry("float8", BinaryNumberEncoder.FLOAT8),
            entry("bool", BinaryNumberEncoder.BOOL),
            entry("numeric", BinaryNumericEncoder.INSTANCE),
            entry("text", BinaryTextEncoder.TEXT),
            entry("varchar", BinaryTextEncoder.TEXT),
            entry("bpchar", BinaryTextEncoder.TEXT),
            entry("json", BinaryTextEncoder.TEXT),
            entry("jsonb", BinaryTextEncoder.JSONB),
            entry("bytea", BinaryTextEncoder.BYTEA),
            entry("uuid", BinaryTextEncoder.UUID_BYTES),
            entry("date", BinaryTemporalEncoder.DATE),
            entry("time", BinaryTemporalEncoder.TIME),
            entry("timetz", BinaryTemporalEncoder.TIMETZ),
            entry("timestamp", BinaryTemporalEncoder.TIMESTAMP),
            entry("timestamptz", BinaryTemporalEncoder.TIMESTAMPTZ));

    private BinaryValueEncoders() {}

    /** The binary encoder of {@code typeName}, or empty when pgsink writes the type only as CSV. */
    public static Optional<BinaryValueEncoder> forType(String typeName)
    {
        return Optional.ofNullable(ENCODERS.get(requireNonNull(typeName, "typeName is null")));
    }
}
