package io.pgsink.connector.debezium;

import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.data.Values;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The headers by which Debezium marks the two records of an update that changes a primary key: a
 * delete of the old key carrying {@code __debezium.newkey}, then a create of the new key carrying
 * {@code __debezium.oldkey}. Both come from one WAL record, so they share one source position.
 *
 * <p>Debezium's engine hands the headers over as key structs. Through Kafka they are what the
 * worker's {@code header.converter} makes of them: Connect's default ({@code SimpleHeaderConverter})
 * writes a struct as JSON text and reads it back as a map, which is read here with the record's
 * key schema (the old key has the columns of the new one).
 */
public final class KeyChangeHeaders
{
    /** On the delete half of a key change: the new key. */
    public static final String NEW_KEY = "__debezium.newkey";
    /** On the create half of a key change: the old key. */
    public static final String OLD_KEY = "__debezium.oldkey";

    private KeyChangeHeaders() {}

    /** Whether {@code record} is the delete half of a key change (or the tombstone that follows it). */
    public static boolean isDeleteHalf(ConnectRecord<?> record)
    {
        return header(record, NEW_KEY) != null;
    }

    /**
     * On the create half of a key change, the old key; null on any other record, and when the
     * header cannot be read as a key of the record's key schema.
     */
    @Nullable
    public static Struct oldKey(ConnectRecord<?> record)
    {
        Header header = header(record, OLD_KEY);
        if (header == null || header.value() == null) {
            return null;
        }
        Object value = header.value();
        if (value instanceof Struct key) {
            return key;
        }
        Schema keySchema = record.keySchema();
        if (keySchema == null || keySchema.type() != Schema.Type.STRUCT) {
            return null;
        }
        try {
            if (value instanceof byte[] bytes) {
                // header.converter=ByteArrayConverter: the bytes SimpleHeaderConverter wrote, JSON text
                value = new String(bytes, StandardCharsets.UTF_8);
            }
            if (value instanceof String text) {
                value = Values.parseString(text).value();
            }
            return value instanceof Map<?, ?> fields ? struct(keySchema, fields) : null;
        }
        catch (DataException | ArithmeticException e) {
            return null;
        }
    }

    @Nullable
    private static Struct struct(Schema keySchema, Map<?, ?> fields)
    {
        Struct key = new Struct(keySchema);
        for (Field field : keySchema.fields()) {
            if (!fields.containsKey(field.name())) {
                return null;
            }
            Object value = fields.get(field.name());
            if (value != null) {
                value = convert(field.schema(), value);
                if (value == null) {
                    return null;
                }
            }
            key.put(field, value);
        }
        return key;
    }

    /**
     * A header value, as {@code SimpleHeaderConverter} parsed it, in the type of the key field; null when it has no
     * such reading.
     */
    @Nullable
    private static Object convert(Schema schema, Object value)
    {
        String logical = schema.name();
        if (Decimal.LOGICAL_NAME.equals(logical)) {
            return Values.convertToDecimal(null, value, Integer.parseInt(schema.parameters().get(Decimal.SCALE_FIELD)));
        }
        if (Timestamp.LOGICAL_NAME.equals(logical)) {
            return Values.convertToTimestamp(null, value);
        }
        if (Date.LOGICAL_NAME.equals(logical)) {
            return Values.convertToDate(null, value);
        }
        if (Time.LOGICAL_NAME.equals(logical)) {
            return Values.convertToTime(null, value);
        }
        return switch (schema.type()) {
            case INT8 -> Values.convertToByte(null, value);
            case INT16 -> Values.convertToShort(null, value);
            case INT32 -> Values.convertToInteger(null, value);
            case INT64 -> Values.convertToLong(null, value);
            case FLOAT32 -> Values.convertToFloat(null, value);
            case FLOAT64 -> Values.convertToDouble(null, value);
            case BOOLEAN -> Values.convertToBoolean(null, value);
            case STRING -> value instanceof String ? value : Values.convertToString(null, value);
            case BYTES -> value instanceof byte[] ? value : null;
            case ARRAY, MAP, STRUCT -> null;
        };
    }

    @Nullable
    private static Header header(ConnectRecord<?> record, String name)
    {
        return record.headers() == null ? null : record.headers().lastWithName(name);
    }
}
