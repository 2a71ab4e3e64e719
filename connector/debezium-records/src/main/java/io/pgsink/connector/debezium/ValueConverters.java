package io.pgsink.connector.debezium;

import io.pgsink.core.change.UnavailableValue;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Chooses the {@link ValueConverter} for a column from its Kafka Connect schema (type and logical
 * name) and, when Debezium propagated it, the source column type. The mapping, by Debezium schema
 * name (the temporal ones in {@link TemporalConverters}):
 * <ul>
 * <li>{@code io.debezium.time.Date}: days since the epoch, to {@code LocalDate} ({@code infinity} kept);</li>
 * <li>{@code Time} (ms), {@code MicroTime}, {@code NanoTime}: to {@code LocalTime}; {@code 24:00:00} as text;</li>
 * <li>{@code Timestamp} (ms), {@code MicroTimestamp}, {@code NanoTimestamp}: to {@code LocalDateTime} ({@code infinity}
 *     kept);</li>
 * <li>{@code ZonedTimestamp}, {@code ZonedTime}: ISO-8601 text, to {@code OffsetDateTime} / {@code OffsetTime};</li>
 * <li>text of a {@code timestamp} column (the standalone service's {@code pgsinktext}): to {@code LocalDateTime};</li>
 * <li>Connect {@code Decimal} ({@code BigDecimal}) and {@code VariableScaleDecimal} (scale + unscaled bytes): to
 *     {@code BigDecimal}; with {@code decimal.handling.mode=string} the text, {@code NaN} and {@code Infinity}
 *     included, is passed on;</li>
 * <li>{@code Interval} (ISO-8601 text, which PostgreSQL reads) passed on; {@code MicroDuration} as
 *     {@code N microseconds};</li>
 * <li>{@code Bits}: little-endian bytes to a bit string; {@code Point}: {@code (x,y)};
 *     {@code Geometry}/{@code Geography}: hex EWKB;</li>
 * <li>{@code Json}, {@code Xml}, {@code Uuid}, {@code Enum}, {@code EnumSet}, {@code Ltree}, {@code TsVector}: text
 *     passed on;</li>
 * <li>a Connect map (hstore with {@code hstore.handling.mode=map}): hstore text, {@code "k"=>"v"};</li>
 * <li>arrays: a {@code List} of converted elements.</li>
 * </ul>
 * Debezium's placeholder for an unchanged TOASTed value, in every form Debezium gives it (text,
 * bytes, one-element lists, integer lists, a one-entry map), becomes {@link UnavailableValue#INSTANCE}.
 */
final class ValueConverters
{
    static final String DATE = "io.debezium.time.Date";
    static final String TIME = "io.debezium.time.Time";
    static final String MICRO_TIME = "io.debezium.time.MicroTime";
    static final String NANO_TIME = "io.debezium.time.NanoTime";
    static final String TIMESTAMP = "io.debezium.time.Timestamp";
    static final String MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp";
    static final String NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp";
    static final String ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp";
    static final String ZONED_TIME = "io.debezium.time.ZonedTime";
    static final String MICRO_DURATION = "io.debezium.time.MicroDuration";
    static final String INTERVAL = "io.debezium.time.Interval";
    static final String VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal";
    static final String BITS = "io.debezium.data.Bits";
    static final String POINT = "io.debezium.data.geometry.Point";
    static final String GEOMETRY = "io.debezium.data.geometry.Geometry";
    static final String GEOGRAPHY = "io.debezium.data.geometry.Geography";
    static final String DOUBLE_VECTOR = "io.debezium.data.DoubleVector";
    static final String FLOAT_VECTOR = "io.debezium.data.FloatVector";
    static final String SPARSE_VECTOR = "io.debezium.data.SparseDoubleVector";
    static final String CONNECT_DECIMAL = "org.apache.kafka.connect.data.Decimal";
    static final String CONNECT_DATE = "org.apache.kafka.connect.data.Date";
    static final String CONNECT_TIME = "org.apache.kafka.connect.data.Time";
    static final String CONNECT_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp";

    static final ValueConverter IDENTITY = value -> value;

    static final ValueConverter VARIABLE_SCALE_DECIMAL_VALUE = value -> {
        Struct struct = (Struct) value;
        Integer scale = struct.getInt32("scale");
        Object unscaled = struct.get("value");
        if (scale == null || unscaled == null) {
            throw new IllegalArgumentException("variable scale decimal without scale or value");
        }
        return new BigDecimal(new BigInteger(bytes(unscaled)), scale);
    };

    static final ValueConverter POINT_VALUE = value -> {
        Struct struct = (Struct) value;
        return "(" + struct.getFloat64("x") + "," + struct.getFloat64("y") + ")";
    };

    static final ValueConverter GEOMETRY_VALUE = value -> {
        Struct struct = (Struct) value;
        return HexFormat.of()
                .formatHex(extendedWkb(bytes(struct.get("wkb")), Optional.ofNullable(struct.getInt32("srid"))));
    };

    static final ValueConverter VECTOR_VALUE = value -> {
        StringBuilder text = new StringBuilder("[");
        List<?> elements = (List<?>) value;
        for (int i = 0; i < elements.size(); i++) {
            if (i > 0) {
                text.append(',');
            }
            text.append(elements.get(i));
        }
        return text.append(']').toString();
    };

    static final ValueConverter SPARSE_VECTOR_VALUE = value -> {
        Struct struct = (Struct) value;
        Map<?, ?> entries = struct.getMap("vector");
        StringBuilder text = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<?, ?> entry : new TreeMap<>(entries).entrySet()) {
            if (!first) {
                text.append(',');
            }
            first = false;
            text.append(entry.getKey()).append(':').append(entry.getValue());
        }
        return text.append("}/").append(struct.get("dimensions")).toString();
    };

    static final ValueConverter HSTORE_VALUE = value -> {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
            if (text.length() > 0) {
                text.append(", ");
            }
            appendHstoreString(text, String.valueOf(entry.getKey()));
            text.append("=>");
            if (entry.getValue() == null) {
                text.append("NULL");
            }
            else {
                appendHstoreString(text, String.valueOf(entry.getValue()));
            }
        }
        return text.toString();
    };

    /**
     * A numeric column with {@code decimal.handling.mode=string}: digits as they are, but Debezium
     * spells the special values as its enum names ({@code NAN}, {@code POSITIVE_INFINITY},
     * {@code NEGATIVE_INFINITY}), which PostgreSQL does not read.
     */
    static final ValueConverter NUMERIC_TEXT = value -> switch ((String) value) {
        case "NAN" -> "NaN";
        case "POSITIVE_INFINITY" -> "Infinity";
        case "NEGATIVE_INFINITY" -> "-Infinity";
        default -> value;
    };

    /** A bit(1) or varbit(1) column, which Debezium sends as a boolean. */
    static final ValueConverter BIT_BOOLEAN = value -> ((Boolean) value) ? "1" : "0";

    /**
     * A type Debezium does not know, sent as the bytes of its PostgreSQL text ({@code include.unknown.datatypes=true}).
     */
    static final ValueConverter TEXT_BYTES = value -> new String(bytes(value), StandardCharsets.UTF_8);

    private ValueConverters() {}

    /**
     * The converter for a column of this schema.
     *
     * @param sourceType the source column type when known (lower case, e.g. {@code varbit}, {@code _int4}, {@code box})
     * @throws IllegalArgumentException when values of this schema cannot be written to PostgreSQL
     */
    static ValueConverter forSchema(Schema schema, Optional<String> sourceType, UnavailablePlaceholder placeholder)
    {
        ValueConverter converter = resolve(schema, sourceType, placeholder);
        switch (schema.type()) {
            case STRING, BYTES, ARRAY, MAP -> {
                // the only shapes in which Debezium sends the unchanged-TOAST placeholder
                return value -> placeholder.matches(value) ? UnavailableValue.INSTANCE : converter.convert(value);
            }
            case INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRUCT -> {
                return converter;
            }
        }
        throw new IllegalArgumentException("unknown Connect type " + schema.type());
    }

    private static ValueConverter resolve(Schema schema, Optional<String> sourceType,
            UnavailablePlaceholder placeholder)
    {
        String name = schema.name();
        if (name != null) {
            switch (name) {
                case DATE:
                    return TemporalConverters.DATE_DAYS;
                case TIME:
                    return TemporalConverters.TIME_MILLIS;
                case MICRO_TIME:
                    return TemporalConverters.TIME_MICROS;
                case NANO_TIME:
                    return TemporalConverters.TIME_NANOS;
                case TIMESTAMP:
                    return TemporalConverters.TIMESTAMP_MILLIS;
                case MICRO_TIMESTAMP:
                    return TemporalConverters.TIMESTAMP_MICROS;
                case NANO_TIMESTAMP:
                    return TemporalConverters.TIMESTAMP_NANOS;
                case ZONED_TIMESTAMP:
                    return TemporalConverters.ZONED_TIMESTAMP_TEXT;
                case ZONED_TIME:
                    return TemporalConverters.ZONED_TIME_TEXT;
                case MICRO_DURATION:
                    return TemporalConverters.MICRO_DURATION_MICROS;
                case VARIABLE_SCALE_DECIMAL:
                    return VARIABLE_SCALE_DECIMAL_VALUE;
                case BITS:
                    return bits(schema, sourceType);
                case POINT:
                    return POINT_VALUE;
                case GEOMETRY, GEOGRAPHY:
                    return GEOMETRY_VALUE;
                case DOUBLE_VECTOR, FLOAT_VECTOR:
                    return VECTOR_VALUE;
                case SPARSE_VECTOR:
                    return SPARSE_VECTOR_VALUE;
                case CONNECT_DATE:
                    return TemporalConverters.CONNECT_DATE_VALUE;
                case CONNECT_TIME:
                    return TemporalConverters.CONNECT_TIME_VALUE;
                case CONNECT_TIMESTAMP:
                    return TemporalConverters.CONNECT_TIMESTAMP_VALUE;
                case CONNECT_DECIMAL, INTERVAL:
                    return IDENTITY;
                default:
                    // Json, Xml, Uuid, Enum, EnumSet, Ltree, TsVector... are text; anything else is handled by its type
                    break;
            }
        }
        switch (schema.type()) {
            case INT8, INT16, INT32, INT64, FLOAT32, FLOAT64 -> {
                return IDENTITY;
            }
            case STRING -> {
                if (sourceType.filter(type -> type.equals("timestamp")).isPresent()) {
                    return TemporalConverters.POSTGRES_TIMESTAMP_TEXT;
                }
                return sourceType.filter(type -> type.equals("numeric") || type.equals("decimal")).isPresent()
                        ? NUMERIC_TEXT : IDENTITY;
            }
            case BOOLEAN -> {
                return sourceType.filter(type -> type.equals("bit") || type.equals("varbit")).isPresent()
                        ? BIT_BOOLEAN : IDENTITY;
            }
            case BYTES -> {
                return sourceType.filter(type -> !type.equals("bytea")).isPresent() ? TEXT_BYTES : IDENTITY;
            }
            case ARRAY -> {
                Optional<String> elementType = sourceType.filter(type -> type.startsWith("_"))
                        .map(type -> type.substring(1));
                ValueConverter element = forSchema(schema.valueSchema(), elementType, placeholder);
                return value -> {
                    List<?> list = (List<?>) value;
                    List<Object> converted = new ArrayList<>(list.size());
                    for (Object each : list) {
                        converted.add(each == null ? null : element.convert(each));
                    }
                    return converted;
                };
            }
            case MAP -> {
                if (schema.keySchema().type() != Schema.Type.STRING) {
                    throw new IllegalArgumentException("a map with " + schema.keySchema().type()
                            + " keys has no PostgreSQL representation (hstore maps text to text)");
                }
                return HSTORE_VALUE;
            }
            case STRUCT ->
                    throw new IllegalArgumentException("a struct" + (name == null ? "" : " of type " + name)
                            + " has no PostgreSQL representation");
        }
        throw new IllegalArgumentException("unknown Connect type " + schema.type());
    }

    private static ValueConverter bits(Schema schema, Optional<String> sourceType)
    {
        String lengthParameter = schema.parameters() == null ? null : schema.parameters().get("length");
        int declared;
        try {
            declared = lengthParameter == null ? -1 : Integer.parseInt(lengthParameter);
        }
        catch (NumberFormatException e) {
            declared = -1;
        }
        // bit(n) always has n bits; a varbit's declared length is only its maximum, and Debezium
        // does not say how long the value was, so its leading zeros cannot be restored
        boolean varying = sourceType.map(type -> type.equals("varbit")).orElse(false);
        int fixedLength = !varying && declared > 0 && declared <= 83_886_080 ? declared : -1;
        return value -> {
            BitSet bits = BitSet.valueOf(bytes(value));
            int length = fixedLength > 0 ? fixedLength : Math.max(bits.length(), 1);
            if (bits.length() > length) {
                throw new IllegalArgumentException("bit string has bit " + (bits.length() - 1)
                        + " set but the column has " + length + " bits");
            }
            char[] text = new char[length];
            for (int i = 0; i < length; i++) {
                text[length - 1 - i] = bits.get(i) ? '1' : '0';
            }
            return new String(text);
        };
    }

    private static void appendHstoreString(StringBuilder text, String value)
    {
        text.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                text.append('\\');
            }
            text.append(c);
        }
        text.append('"');
    }

    static byte[] bytes(Object value)
    {
        if (value instanceof byte[] array) {
            return array;
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] array = new byte[buffer.remaining()];
            buffer.duplicate().get(array);
            return array;
        }
        throw new IllegalArgumentException("expected bytes, got " + value.getClass().getName());
    }

    /**
     * Adds the SRID to a WKB geometry (PostGIS extended WKB: the 0x20000000 flag in the type word,
     * then the SRID), so that hex input keeps it. A WKB that already carries one is left alone.
     */
    static byte[] extendedWkb(byte[] wkb, Optional<Integer> srid)
    {
        if (srid.isEmpty() || srid.get() == 0 || wkb.length < 5) {
            return wkb;
        }
        ByteBuffer in = ByteBuffer.wrap(wkb)
                .order(wkb[0] == 0 ? java.nio.ByteOrder.BIG_ENDIAN : java.nio.ByteOrder.LITTLE_ENDIAN);
        int type = in.getInt(1);
        if ((type & 0x2000_0000) != 0) {
            return wkb;
        }
        ByteBuffer out = ByteBuffer.allocate(wkb.length + 4).order(in.order());
        out.put(wkb[0]);
        out.putInt(type | 0x2000_0000);
        out.putInt(srid.get());
        out.put(wkb, 5, wkb.length - 5);
        return out.array();
    }
}
