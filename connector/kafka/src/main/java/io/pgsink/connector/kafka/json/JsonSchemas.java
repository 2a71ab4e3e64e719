package io.pgsink.connector.kafka.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.errors.DataException;
import org.jetbrains.annotations.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Interprets the {@code "schema"} of a JSON document {@code JsonConverter} wrote with
 * {@code schemas.enable=true} as the Connect {@link Schema} it would make of it: {@code type},
 * {@code optional}, {@code name}, {@code version}, {@code doc}, {@code parameters},
 * {@code default}, {@code fields} (each with {@code field}), {@code items}, {@code keys},
 * {@code values}; other keys are ignored. Called once per distinct schema ({@link JsonEnvelopeReader}
 * caches the result by the schema's bytes), so it reads simply rather than fast. Stateless.
 */
final class JsonSchemas
{
    private JsonSchemas() {}

    /**
     * Reads the schema object at {@code offset} of {@code json}.
     *
     * @throws DataException when it is not a Connect schema
     * @throws IOException when it is not JSON
     */
    static Schema read(byte[] json, int offset, int length)
            throws IOException
    {
        try (JsonParser parser = JsonEnvelopeReader.parser(json, offset, length)) {
            parser.nextToken();
            Schema schema = read(parser, json, offset);
            if (parser.nextToken() != null) {
                throw new DataException("the schema is followed by more JSON");
            }
            return schema;
        }
    }

    /** The schema object whose START_OBJECT is the current token. */
    private static Schema read(JsonParser parser, byte[] json, int offset)
            throws IOException
    {
        if (parser.currentToken() != JsonToken.START_OBJECT) {
            throw new DataException("a schema is not a JSON object");
        }
        String type = null;
        Boolean optional = null;
        String name = null;
        Integer version = null;
        String doc = null;
        Map<String, String> parameters = null;
        int defaultStart = -1;
        int defaultEnd = -1;
        List<String> fieldNames = new ArrayList<>();
        List<Schema> fieldSchemas = new ArrayList<>();
        Schema items = null;
        Schema keys = null;
        Schema values = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String key = parser.currentName();
            JsonToken token = parser.nextToken();
            switch (key) {
                case "type" -> type = text(parser, token, key);
                case "optional" -> {
                    if (token == JsonToken.VALUE_TRUE || token == JsonToken.VALUE_FALSE) {
                        optional = token == JsonToken.VALUE_TRUE;
                    }
                }
                case "name" -> name = token == JsonToken.VALUE_STRING ? parser.getText() : null;
                case "version" -> version = token == JsonToken.VALUE_NUMBER_INT ? parser.getIntValue() : null;
                case "doc" -> doc = token == JsonToken.VALUE_STRING ? parser.getText() : null;
                case "parameters" -> parameters = parameters(parser, token);
                case "default" -> {
                    defaultStart = offset + (int) parser.currentTokenLocation().getByteOffset();
                    parser.finishToken();
                    parser.skipChildren();
                    defaultEnd = offset + (int) parser.currentLocation().getByteOffset();
                    if (token == JsonToken.VALUE_NULL) {
                        defaultStart = -1;
                    }
                }
                case "fields" -> {
                    if (token != JsonToken.START_ARRAY) {
                        throw new DataException("a struct schema's \"fields\" is not an array");
                    }
                    while (parser.nextToken() != JsonToken.END_ARRAY) {
                        FieldSchema field = field(parser, json, offset);
                        fieldNames.add(field.name());
                        fieldSchemas.add(field.schema());
                    }
                }
                case "items" -> items = token == JsonToken.VALUE_NULL ? null : read(parser, json, offset);
                case "keys" -> keys = token == JsonToken.VALUE_NULL ? null : read(parser, json, offset);
                case "values" -> values = token == JsonToken.VALUE_NULL ? null : read(parser, json, offset);
                default -> parser.skipChildren();
            }
        }
        if (type == null) {
            throw new DataException("a schema has no \"type\"");
        }
        SchemaBuilder builder = switch (type) {
            case "boolean" -> SchemaBuilder.bool();
            case "int8" -> SchemaBuilder.int8();
            case "int16" -> SchemaBuilder.int16();
            case "int32" -> SchemaBuilder.int32();
            case "int64" -> SchemaBuilder.int64();
            case "float" -> SchemaBuilder.float32();
            case "double" -> SchemaBuilder.float64();
            case "bytes" -> SchemaBuilder.bytes();
            case "string" -> SchemaBuilder.string();
            case "array" -> {
                if (items == null) {
                    throw new DataException("an array schema has no \"items\"");
                }
                yield SchemaBuilder.array(items);
            }
            case "map" -> {
                if (keys == null || values == null) {
                    throw new DataException("a map schema has no \"keys\" or \"values\"");
                }
                yield SchemaBuilder.map(keys, values);
            }
            case "struct" -> {
                SchemaBuilder struct = SchemaBuilder.struct();
                for (int i = 0; i < fieldNames.size(); i++) {
                    struct.field(fieldNames.get(i), fieldSchemas.get(i));
                }
                yield struct;
            }
            default -> throw new DataException("a schema has the unknown type '" + type + "'");
        };
        // the order of JsonConverter.asConnectSchema
        if (optional != null && optional) {
            builder.optional();
        }
        else {
            builder.required();
        }
        if (name != null) {
            builder.name(name);
        }
        if (version != null) {
            builder.version(version);
        }
        if (doc != null) {
            builder.doc(doc);
        }
        if (parameters != null) {
            builder.parameters(parameters);
        }
        if (defaultStart >= 0) {
            builder.defaultValue(defaultValue(builder.build(), json, defaultStart, defaultEnd - defaultStart));
        }
        return builder.build();
    }

    private record FieldSchema(String name, Schema schema) {}

    /** A struct field: its schema object, with the field name in {@code "field"}. */
    private static FieldSchema field(JsonParser parser, byte[] json, int offset)
            throws IOException
    {
        // the field's schema keys and "field" share one object: read it as a schema, then find the name
        int start = offset + (int) parser.currentTokenLocation().getByteOffset();
        if (parser.currentToken() != JsonToken.START_OBJECT) {
            throw new DataException("a struct schema's field is not a JSON object");
        }
        parser.skipChildren();
        int end = offset + (int) parser.currentLocation().getByteOffset();
        String name = null;
        try (JsonParser fieldParser = JsonEnvelopeReader.parser(json, start, end - start)) {
            fieldParser.nextToken();
            while (fieldParser.nextToken() == JsonToken.FIELD_NAME) {
                String key = fieldParser.currentName();
                JsonToken token = fieldParser.nextToken();
                if (key.equals("field") && token == JsonToken.VALUE_STRING) {
                    name = fieldParser.getText();
                }
                fieldParser.skipChildren();
            }
        }
        if (name == null) {
            throw new DataException("a struct schema's field has no name (\"field\")");
        }
        try (JsonParser schemaParser = JsonEnvelopeReader.parser(json, start, end - start)) {
            schemaParser.nextToken();
            return new FieldSchema(name, read(schemaParser, json, start));
        }
    }

    @Nullable
    private static String text(JsonParser parser, JsonToken token, String key)
            throws IOException
    {
        if (token != JsonToken.VALUE_STRING) {
            throw new DataException("a schema's \"" + key + "\" is not a string");
        }
        return parser.getText();
    }

    @Nullable
    private static Map<String, String> parameters(JsonParser parser, JsonToken token)
            throws IOException
    {
        if (token != JsonToken.START_OBJECT) {
            parser.skipChildren();
            return null;
        }
        Map<String, String> parameters = new LinkedHashMap<>();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String key = parser.currentName();
            if (parser.nextToken() != JsonToken.VALUE_STRING) {
                throw new DataException("schema parameter " + key + " is not a string");
            }
            parameters.put(key, parser.getText());
        }
        return parameters;
    }

    private static Object defaultValue(Schema schema, byte[] json, int offset, int length)
            throws IOException
    {
        try (JsonParser parser = JsonEnvelopeReader.parser(json, offset, length)) {
            parser.nextToken();
            return JsonValues.read(parser, schema);
        }
    }
}
