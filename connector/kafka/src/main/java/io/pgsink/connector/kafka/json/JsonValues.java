package io.pgsink.connector.kafka.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.DataException;
import org.jetbrains.annotations.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one JSON value of a known Connect schema from a streaming parser into the Java value
 * Kafka Connect's {@code JsonConverter} (schemas enabled) makes of it: the same types, logical
 * types ({@code Decimal} as base64 bytes or a number, {@code Date}, {@code Time},
 * {@code Timestamp}) and null handling (a null or missing value is the schema's default when it
 * has one, null when optional, an error when required), so that the records pgsink maps are the
 * same whichever way they were read. Unlike {@code JsonConverter}, a value of the wrong JSON type
 * is an error rather than a zero, and the floats {@code "NaN"}, {@code "Infinity"} and
 * {@code "-Infinity"} (which Jackson writes as strings) are read as such.
 *
 * <p>Error messages name the schema type and, for struct fields, the field; never a value.
 * Stateless.
 */
final class JsonValues
{
    private JsonValues() {}

    /**
     * Reads the value whose first token is the parser's current one; on return the current token
     * is its last.
     *
     * @throws DataException when the JSON does not hold a value of {@code schema}
     */
    @Nullable
    static Object read(JsonParser parser, Schema schema)
            throws IOException
    {
        JsonToken token = parser.currentToken();
        if (token == JsonToken.VALUE_NULL) {
            return absent(schema);
        }
        String logical = schema.name();
        if (logical != null) {
            switch (logical) {
                case Decimal.LOGICAL_NAME -> {
                    if (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT) {
                        return parser.getDecimalValue();
                    }
                    expect(token == JsonToken.VALUE_STRING, schema, token);
                    return Decimal.toLogical(schema, parser.getBinaryValue());
                }
                case Date.LOGICAL_NAME -> {
                    expect(token == JsonToken.VALUE_NUMBER_INT, schema, token);
                    return Date.toLogical(schema, parser.getIntValue());
                }
                case Time.LOGICAL_NAME -> {
                    expect(token == JsonToken.VALUE_NUMBER_INT, schema, token);
                    return Time.toLogical(schema, parser.getIntValue());
                }
                case Timestamp.LOGICAL_NAME -> {
                    expect(token == JsonToken.VALUE_NUMBER_INT, schema, token);
                    return Timestamp.toLogical(schema, parser.getLongValue());
                }
                default -> {
                    // Debezium's semantic types are their Connect type here; pgsink interprets them later
                }
            }
        }
        switch (schema.type()) {
            case BOOLEAN -> {
                expect(token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE, schema, token);
                return token == JsonToken.VALUE_TRUE;
            }
            case INT8 -> {
                expectNumber(token, schema);
                return (byte) parser.getIntValue();
            }
            case INT16 -> {
                expectNumber(token, schema);
                return (short) parser.getIntValue();
            }
            case INT32 -> {
                expectNumber(token, schema);
                return parser.getIntValue();
            }
            case INT64 -> {
                expectNumber(token, schema);
                return parser.getLongValue();
            }
            case FLOAT32 -> {
                if (token == JsonToken.VALUE_STRING) {
                    return (float) nonFinite(parser, schema);
                }
                expectNumber(token, schema);
                return parser.getFloatValue();
            }
            case FLOAT64 -> {
                if (token == JsonToken.VALUE_STRING) {
                    return nonFinite(parser, schema);
                }
                expectNumber(token, schema);
                return parser.getDoubleValue();
            }
            case BYTES -> {
                expect(token == JsonToken.VALUE_STRING, schema, token);
                return parser.getBinaryValue();
            }
            case STRING -> {
                expect(token == JsonToken.VALUE_STRING, schema, token);
                return parser.getText();
            }
            case ARRAY -> {
                expect(token == JsonToken.START_ARRAY, schema, token);
                List<Object> list = new ArrayList<>();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    list.add(read(parser, schema.valueSchema()));
                }
                return list;
            }
            case MAP -> {
                return map(parser, schema, token);
            }
            case STRUCT -> {
                return struct(parser, schema, token);
            }
        }
        throw new DataException("unknown Connect type " + schema.type());
    }

    /**
     * The value of a field that is null or missing: null where the schema allows it, even when the
     * column has a default (JsonConverter's {@code replace.null.with.default=true}, its default,
     * would write the column's default for a NULL the source holds); the default only where the
     * field may not be null.
     */
    @Nullable
    static Object absent(Schema schema)
    {
        if (schema.isOptional()) {
            return null;
        }
        if (schema.defaultValue() != null) {
            return schema.defaultValue();
        }
        throw new DataException("a required " + schema.type()
                + (schema.name() == null ? "" : " (" + schema.name() + ")") + " is null");
    }

    private static Map<Object, Object> map(JsonParser parser, Schema schema, JsonToken token)
            throws IOException
    {
        Map<Object, Object> map = new HashMap<>();
        if (schema.keySchema().type() == Schema.Type.STRING) {
            // string keys: a JSON object
            expect(token == JsonToken.START_OBJECT, schema, token);
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String key = parser.currentName();
                parser.nextToken();
                map.put(key, read(parser, schema.valueSchema()));
            }
            return map;
        }
        // other keys: an array of [key, value] pairs
        expect(token == JsonToken.START_ARRAY, schema, token);
        while (parser.nextToken() != JsonToken.END_ARRAY) {
            expect(parser.currentToken() == JsonToken.START_ARRAY, schema, parser.currentToken());
            parser.nextToken();
            Object key = read(parser, schema.keySchema());
            parser.nextToken();
            Object value = read(parser, schema.valueSchema());
            if (parser.nextToken() != JsonToken.END_ARRAY) {
                throw new DataException("a map entry is not a [key, value] pair");
            }
            map.put(key, value);
        }
        return map;
    }

    private static Struct struct(JsonParser parser, Schema schema, JsonToken token)
            throws IOException
    {
        Struct struct = new Struct(schema);
        // read and checked here against the schema: Connect's put would check each value again
        Object[] direct = StructFiller.values(struct);
        Object[] values = fields(parser, schema, token, direct);
        if (direct == null) {
            List<Field> fields = schema.fields();
            for (int i = 0; i < values.length; i++) {
                struct.put(fields.get(i), values[i]);
            }
        }
        return struct;
    }

    /**
     * Reads a JSON object of a struct schema into its fields' values, indexed as the schema's
     * fields, as a struct would hold them (a missing or null field is {@link #absent}); into
     * {@code into} when given.
     *
     * @throws DataException when the JSON does not hold such a struct, naming the field
     */
    static Object[] fields(JsonParser parser, Schema schema, JsonToken token, @Nullable Object[] into)
            throws IOException
    {
        expect(token == JsonToken.START_OBJECT, schema, token);
        List<Field> fields = schema.fields();
        Object[] values = into != null ? into : new Object[fields.size()];
        boolean[] present = new boolean[fields.size()];
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            Field field = schema.field(parser.currentName());
            parser.nextToken();
            if (field == null) {
                // JsonConverter ignores fields its schema does not have
                parser.skipChildren();
                continue;
            }
            try {
                values[field.index()] = read(parser, field.schema());
            }
            catch (DataException e) {
                throw new DataException("field " + field.name() + ": " + e.getMessage(), e);
            }
            present[field.index()] = true;
        }
        for (int i = 0; i < values.length; i++) {
            if (!present[i]) {
                try {
                    values[i] = absent(fields.get(i).schema());
                }
                catch (DataException e) {
                    throw new DataException("field " + fields.get(i).name() + ": " + e.getMessage(), e);
                }
            }
        }
        return values;
    }

    private static double nonFinite(JsonParser parser, Schema schema)
            throws IOException
    {
        return switch (parser.getText()) {
            case "NaN" -> Double.NaN;
            case "Infinity" -> Double.POSITIVE_INFINITY;
            case "-Infinity" -> Double.NEGATIVE_INFINITY;
            default -> throw new DataException("a " + schema.type()
                    + " is a JSON string other than NaN, Infinity or -Infinity");
        };
    }

    private static void expectNumber(JsonToken token, Schema schema)
    {
        expect(token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT, schema, token);
    }

    private static void expect(boolean condition, Schema schema, JsonToken token)
    {
        if (!condition) {
            throw new DataException("a " + schema.type() + (schema.name() == null ? "" : " (" + schema.name() + ")")
                    + " is a JSON " + describe(token));
        }
    }

    private static String describe(JsonToken token)
    {
        return switch (token) {
            case START_OBJECT -> "object";
            case START_ARRAY -> "array";
            case VALUE_STRING -> "string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            case END_OBJECT, END_ARRAY, FIELD_NAME, VALUE_EMBEDDED_OBJECT, NOT_AVAILABLE -> token.name();
        };
    }
}
