package io.pgsink.connector.debezium;

import io.pgsink.core.UnavailableValue;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
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
 * name:
 * <ul>
 * <li>{@code io.debezium.time.Date}: days since the epoch, to {@code LocalDate} ({@code infinity} kept);</li>
 * <li>{@code Time} (ms), {@code MicroTime}, {@code NanoTime}: to {@code LocalTime}; {@code 24:00:00} as text;</li>
 * <li>{@code Timestamp} (ms), {@code MicroTimestamp}, {@code NanoTimestamp}: to {@code LocalDateTime} ({@code infinity} kept);</li>
 * <li>{@code ZonedTimestamp}, {@code ZonedTime}: ISO-8601 text, to {@code OffsetDateTime} / {@code OffsetTime};</li>
 * <li>Connect {@code Decimal} ({@code BigDecimal}) and {@code VariableScaleDecimal} (scale + unscaled bytes): to {@code BigDecimal};
 *     with {@code decimal.handling.mode=string} the text, {@code NaN} and {@code Infinity} included, is passed on;</li>
 * <li>{@code Interval} (ISO-8601 text, which PostgreSQL reads) passed on; {@code MicroDuration} as {@code N microseconds};</li>
 * <li>{@code Bits}: little-endian bytes to a bit string; {@code Point}: {@code (x,y)}; {@code Geometry}/{@code Geography}: hex EWKB;</li>
 * <li>{@code Json}, {@code Xml}, {@code Uuid}, {@code Enum}, {@code EnumSet}, {@code Ltree}, {@code TsVector}: text passed on;</li>
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

    /**
     * Debezium writes PostgreSQL's {@code infinity} dates as these day numbers (its internal
     * "infinite" {@code LocalDate}s converted to epoch days), and infinite timestamps as these
     * microsecond and millisecond numbers (pgjdbc's infinity sentinels), or as the extreme longs.
     */
    static final long DATE_POSITIVE_INFINITY_DAYS = LocalDate.parse("-5877611-06-21").toEpochDay();
    static final long DATE_NEGATIVE_INFINITY_DAYS = LocalDate.parse("-5877611-06-22").toEpochDay();
    static final long TIMESTAMP_POSITIVE_INFINITY_MICROS = 9223372036825200000L;
    static final long TIMESTAMP_NEGATIVE_INFINITY_MICROS = -9223372036832400000L;

    /**
     * Inside arrays, pgjdbc hands Debezium infinite dates as {@code java.sql.Date}s of its infinity
     * sentinels, which Debezium turns into day numbers through {@code toLocalDate()} (default time
     * zone) and an int cast. Those numbers lie outside PostgreSQL's date range, so they cannot be
     * real dates.
     */
    static final long DATE_ARRAY_POSITIVE_INFINITY_DAYS = arrayInfinityDays(TIMESTAMP_POSITIVE_INFINITY_MICROS);
    static final long DATE_ARRAY_NEGATIVE_INFINITY_DAYS = arrayInfinityDays(TIMESTAMP_NEGATIVE_INFINITY_MICROS);
    private static final LocalDate POSTGRESQL_MIN_DATE = LocalDate.of(-4713, 11, 24);
    private static final LocalDate POSTGRESQL_MAX_DATE = LocalDate.of(5874897, 12, 31);

    private static final long MICROS_PER_DAY = 86_400_000_000L;
    private static final String END_OF_DAY = "24:00:00";

    static final ValueConverter IDENTITY = value -> value;

    static final ValueConverter DATE_DAYS = value -> {
        long days = ((Number) value).longValue();
        if (days == DATE_POSITIVE_INFINITY_DAYS) {
            return "infinity";
        }
        if (days == DATE_NEGATIVE_INFINITY_DAYS) {
            return "-infinity";
        }
        LocalDate date = LocalDate.ofEpochDay(days);
        if (date.isBefore(POSTGRESQL_MIN_DATE) || date.isAfter(POSTGRESQL_MAX_DATE)) {
            if (days == DATE_ARRAY_POSITIVE_INFINITY_DAYS) {
                return "infinity";
            }
            if (days == DATE_ARRAY_NEGATIVE_INFINITY_DAYS) {
                return "-infinity";
            }
        }
        return date;
    };

    static final ValueConverter TIME_MILLIS = value -> timeOfDay(((Number) value).longValue() * 1_000);
    static final ValueConverter TIME_MICROS = value -> timeOfDay(((Number) value).longValue());
    static final ValueConverter TIME_NANOS = value -> {
        long nanos = ((Number) value).longValue();
        return nanos == MICROS_PER_DAY * 1_000 ? END_OF_DAY : LocalTime.ofNanoOfDay(nanos);
    };

    static final ValueConverter TIMESTAMP_MILLIS = value -> {
        long millis = ((Number) value).longValue();
        if (millis == TIMESTAMP_POSITIVE_INFINITY_MICROS / 1_000) {
            return "infinity";
        }
        if (millis == TIMESTAMP_NEGATIVE_INFINITY_MICROS / 1_000) {
            return "-infinity";
        }
        return localDateTime(Math.floorDiv(millis, 1_000), Math.floorMod(millis, 1_000) * 1_000_000L);
    };

    static final ValueConverter TIMESTAMP_MICROS = value -> {
        long micros = ((Number) value).longValue();
        if (micros == TIMESTAMP_POSITIVE_INFINITY_MICROS || micros == Long.MAX_VALUE) {
            return "infinity";
        }
        if (micros == TIMESTAMP_NEGATIVE_INFINITY_MICROS || micros == Long.MIN_VALUE) {
            return "-infinity";
        }
        return localDateTime(Math.floorDiv(micros, 1_000_000), Math.floorMod(micros, 1_000_000) * 1_000L);
    };

    static final ValueConverter TIMESTAMP_NANOS = value -> {
        long nanos = ((Number) value).longValue();
        if (nanos == Long.MAX_VALUE) {
            return "infinity";
        }
        if (nanos == Long.MIN_VALUE) {
            return "-infinity";
        }
        return localDateTime(Math.floorDiv(nanos, 1_000_000_000), Math.floorMod(nanos, 1_000_000_000));
    };

    static final ValueConverter ZONED_TIMESTAMP_TEXT = value -> {
        String text = (String) value;
        if (text.equals("infinity") || text.equals("-infinity")) {
            return text;
        }
        return OffsetDateTime.parse(text);
    };

    static final ValueConverter ZONED_TIME_TEXT = value -> OffsetTime.parse((String) value);

    static final ValueConverter MICRO_DURATION_MICROS = value -> ((Number) value).longValue() + " microseconds";

    static final ValueConverter CONNECT_DATE_VALUE = value -> LocalDate.ofInstant(((java.util.Date) value).toInstant(), ZoneOffset.UTC);
    static final ValueConverter CONNECT_TIME_VALUE = value -> LocalTime.ofNanoOfDay(Math.floorMod(((java.util.Date) value).getTime(), 86_400_000L) * 1_000_000L);
    static final ValueConverter CONNECT_TIMESTAMP_VALUE = value -> LocalDateTime.ofInstant(((java.util.Date) value).toInstant(), ZoneOffset.UTC);

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
        return HexFormat.of().formatHex(extendedWkb(bytes(struct.get("wkb")), Optional.ofNullable(struct.getInt32("srid"))));
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

    /** A type Debezium does not know, sent as the bytes of its PostgreSQL text ({@code include.unknown.datatypes=true}). */
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

    private static ValueConverter resolve(Schema schema, Optional<String> sourceType, UnavailablePlaceholder placeholder)
    {
        String name = schema.name();
        if (name != null) {
            switch (name) {
                case DATE:
                    return DATE_DAYS;
                case TIME:
                    return TIME_MILLIS;
                case MICRO_TIME:
                    return TIME_MICROS;
                case NANO_TIME:
                    return TIME_NANOS;
                case TIMESTAMP:
                    return TIMESTAMP_MILLIS;
                case MICRO_TIMESTAMP:
                    return TIMESTAMP_MICROS;
                case NANO_TIMESTAMP:
                    return TIMESTAMP_NANOS;
                case ZONED_TIMESTAMP:
                    return ZONED_TIMESTAMP_TEXT;
                case ZONED_TIME:
                    return ZONED_TIME_TEXT;
                case MICRO_DURATION:
                    return MICRO_DURATION_MICROS;
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
                    return CONNECT_DATE_VALUE;
                case CONNECT_TIME:
                    return CONNECT_TIME_VALUE;
                case CONNECT_TIMESTAMP:
                    return CONNECT_TIMESTAMP_VALUE;
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
                return sourceType.filter(type -> type.equals("numeric") || type.equals("decimal")).isPresent() ? NUMERIC_TEXT : IDENTITY;
            }
            case BOOLEAN -> {
                return sourceType.filter(type -> type.equals("bit") || type.equals("varbit")).isPresent() ? BIT_BOOLEAN : IDENTITY;
            }
            case BYTES -> {
                return sourceType.filter(type -> !type.equals("bytea")).isPresent() ? TEXT_BYTES : IDENTITY;
            }
            case ARRAY -> {
                Optional<String> elementType = sourceType.filter(type -> type.startsWith("_")).map(type -> type.substring(1));
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
                    throw new IllegalArgumentException("a map with " + schema.keySchema().type() + " keys has no PostgreSQL representation (hstore maps text to text)");
                }
                return HSTORE_VALUE;
            }
            case STRUCT -> throw new IllegalArgumentException("a struct" + (name == null ? "" : " of type " + name) + " has no PostgreSQL representation");
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
                throw new IllegalArgumentException("bit string has bit " + (bits.length() - 1) + " set but the column has " + length + " bits");
            }
            char[] text = new char[length];
            for (int i = 0; i < length; i++) {
                text[length - 1 - i] = bits.get(i) ? '1' : '0';
            }
            return new String(text);
        };
    }

    @SuppressWarnings("deprecation")
    private static long arrayInfinityDays(long sentinel)
    {
        // pgjdbc's date infinity sentinels are the same numbers as its timestamp ones, in milliseconds
        return (int) new java.sql.Date(sentinel).toLocalDate().toEpochDay();
    }

    private static Object timeOfDay(long micros)
    {
        if (micros == MICROS_PER_DAY) {
            return END_OF_DAY;
        }
        return LocalTime.ofNanoOfDay(micros * 1_000);
    }

    private static LocalDateTime localDateTime(long epochSeconds, long nanos)
    {
        return LocalDateTime.ofEpochSecond(epochSeconds, (int) nanos, ZoneOffset.UTC);
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
        ByteBuffer in = ByteBuffer.wrap(wkb).order(wkb[0] == 0 ? java.nio.ByteOrder.BIG_ENDIAN : java.nio.ByteOrder.LITTLE_ENDIAN);
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
