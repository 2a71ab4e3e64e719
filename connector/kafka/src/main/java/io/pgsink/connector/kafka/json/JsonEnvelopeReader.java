package io.pgsink.connector.kafka.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.jetbrains.annotations.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads the bytes Kafka Connect's {@code JsonConverter} writes with {@code schemas.enable=true},
 * {@code {"schema":…,"payload":…}}, into the schema and value that converter would read, without
 * building a JSON tree: the payload is streamed ({@link JsonValues}) and the schema is interpreted
 * once per distinct schema ({@link JsonSchemas}), cached by its bytes. A change stream repeats one
 * schema per table, so the common case compares the schema's bytes with the last one read and
 * does not parse them at all.
 *
 * <p>Schemaless JSON ({@code schemas.enable=false}) is refused: without the schema, Debezium's
 * values cannot be told apart (a date is a number of days, a decimal base64 text).
 *
 * <p>Errors ({@link DataException}) say what is wrong and at which byte, never a value: Jackson's
 * own messages, which quote the input, are not passed on.
 *
 * <p>Not thread-safe (the cache): one per task and per key or value.
 */
public final class JsonEnvelopeReader
{
    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            // as long as Kafka lets a record be: a large bytea or text column
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(100_000).build())
            .build();
    private static final byte[] SCHEMA_FIRST = "{\"schema\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PAYLOAD_NEXT = ",\"payload\":".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_CACHED_SCHEMAS = 1_000;

    private final Map<SchemaBytes, Schema> schemas = new HashMap<>();
    private byte[] lastSchemaBytes = new byte[0];
    private Schema lastSchema;
    /** Whether {@link #lastSchema} is an envelope {@link EnvelopeImages} reads. */
    private boolean lastSchemaReadable;

    /**
     * @throws DataException when {@code json} is not such a document, naming the reason and byte
     */
    public SchemaAndValue read(byte[] json)
    {
        try {
            if (lastSchema != null && matchesLast(json)) {
                try {
                    return readLastSchemaPayload(json);
                }
                catch (DataException | IOException e) {
                    // fall through: the general path names the problem with the document's own offsets
                }
            }
            return readAnyLayout(json);
        }
        catch (InputCoercionException e) {
            throw new DataException("a number is out of the range of its schema's type (near byte "
                    + e.getLocation().getByteOffset() + ")");
        }
        catch (StreamReadException e) {
            throw new DataException("it is not valid JSON (near byte "
                    + (e.getLocation() == null ? "?" : e.getLocation().getByteOffset()) + ")");
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The payload of a Debezium change event envelope of the last schema read, in the layout
     * {@code JsonConverter} writes (the common case: one schema per table), read without building
     * its structs ({@link EnvelopeImages}); null when {@code json} is not such a document, or not
     * the common case, or not valid: then {@link #read} reads it and names what is wrong.
     */
    @Nullable
    public EnvelopeImages readImages(byte[] json)
    {
        if (lastSchema == null || !lastSchemaReadable || !matchesLast(json)) {
            return null;
        }
        int payloadStart = SCHEMA_FIRST.length + lastSchemaBytes.length + PAYLOAD_NEXT.length;
        int end = json.length - 1;
        while (end > payloadStart && isWhitespace(json[end])) {
            end--;
        }
        if (json[end] != '}') {
            return null;
        }
        try {
            return EnvelopeImages.read(json, payloadStart, end, lastSchema);
        }
        catch (IOException | RuntimeException e) {
            // read again by read, whose failure names the problem
            return null;
        }
    }

    /** The schema of the last document read (by {@link #read}, or {@link #readImages} when it returned one). */
    public Schema lastSchema()
    {
        return lastSchema;
    }

    /**
     * Whether {@code json} starts with {"schema": and the last schema's bytes, then ,"payload": (the layout
     * JsonConverter writes).
     */
    private boolean matchesLast(byte[] json)
    {
        int schemaEnd = SCHEMA_FIRST.length + lastSchemaBytes.length;
        return json.length > schemaEnd + PAYLOAD_NEXT.length
                && Arrays.equals(json, 0, SCHEMA_FIRST.length, SCHEMA_FIRST, 0, SCHEMA_FIRST.length)
                && Arrays.equals(json, SCHEMA_FIRST.length, schemaEnd, lastSchemaBytes, 0, lastSchemaBytes.length)
                && Arrays.equals(json, schemaEnd, schemaEnd + PAYLOAD_NEXT.length, PAYLOAD_NEXT, 0,
                        PAYLOAD_NEXT.length);
    }

    private SchemaAndValue readLastSchemaPayload(byte[] json)
            throws IOException
    {
        int payloadStart = SCHEMA_FIRST.length + lastSchemaBytes.length + PAYLOAD_NEXT.length;
        int end = json.length - 1;
        while (end > payloadStart && isWhitespace(json[end])) {
            end--;
        }
        if (json[end] != '}') {
            throw new DataException("the document does not end with }");
        }
        return new SchemaAndValue(lastSchema, payload(json, payloadStart, end, lastSchema));
    }

    /** The general path: "schema" and "payload" in any order and spacing. */
    private SchemaAndValue readAnyLayout(byte[] json)
            throws IOException
    {
        int schemaStart = -1;
        int schemaEnd = -1;
        int payloadStart = -1;
        int payloadEnd = -1;
        boolean schemaIsNull = false;
        try (JsonParser parser = parser(json, 0, json.length)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new DataException("it is not a JSON object with \"schema\" and \"payload\" (JsonConverter's "
                        + "schemas.enable=true)");
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken token = parser.nextToken();
                int start = (int) parser.currentTokenLocation().getByteOffset();
                parser.finishToken();
                parser.skipChildren();
                int end = (int) parser.currentLocation().getByteOffset();
                switch (name) {
                    case "schema" -> {
                        schemaStart = start;
                        schemaEnd = end;
                        schemaIsNull = token == JsonToken.VALUE_NULL;
                    }
                    case "payload" -> {
                        payloadStart = start;
                        payloadEnd = end;
                    }
                    default -> throw new DataException("it has a field other than \"schema\" and \"payload\"; "
                            + "schemaless JSON (schemas.enable=false) cannot be read");
                }
            }
            if (parser.nextToken() != null) {
                throw new DataException("more JSON follows the document");
            }
        }
        if (schemaStart < 0 || payloadStart < 0) {
            throw new DataException("it is not a JSON object with \"schema\" and \"payload\" (JsonConverter's "
                    + "schemas.enable=true)");
        }
        if (schemaIsNull) {
            throw new DataException("its \"schema\" is null: pgsink needs the schema of each record (a schemaless "
                    + "value cannot be read)");
        }
        Schema schema = schema(json, schemaStart, schemaEnd);
        return new SchemaAndValue(schema, payload(json, payloadStart, payloadEnd, schema));
    }

    private Schema schema(byte[] json, int start, int end)
            throws IOException
    {
        Schema schema;
        if (Arrays.equals(json, start, end, lastSchemaBytes, 0, lastSchemaBytes.length)) {
            schema = lastSchema;
        }
        else {
            SchemaBytes probe = new SchemaBytes(json, start, end);
            schema = schemas.get(probe);
            if (schema == null) {
                schema = JsonSchemas.read(json, start, end - start);
                if (schemas.size() >= MAX_CACHED_SCHEMAS) {
                    schemas.clear();
                }
                schemas.put(probe.copy(), schema);
            }
        }
        if (schema != lastSchema) {
            lastSchemaBytes = Arrays.copyOfRange(json, start, end);
            lastSchema = schema;
            lastSchemaReadable = EnvelopeImages.readable(schema);
        }
        return schema;
    }

    private static Object payload(byte[] json, int start, int end, Schema schema)
            throws IOException
    {
        try (JsonParser parser = parser(json, start, end - start)) {
            parser.nextToken();
            Object value = JsonValues.read(parser, schema);
            if (parser.nextToken() != null) {
                throw new DataException("more JSON follows the payload");
            }
            return value;
        }
    }

    static JsonParser parser(byte[] json, int offset, int length)
            throws IOException
    {
        return JSON.createParser(json, offset, length);
    }

    private static boolean isWhitespace(byte b)
    {
        return b == ' ' || b == '\n' || b == '\r' || b == '\t';
    }

    /** A range of bytes, compared by content: the key of the schema cache. */
    private static final class SchemaBytes
    {
        private final byte[] bytes;
        private final int start;
        private final int end;
        private final int hash;

        SchemaBytes(byte[] bytes, int start, int end)
        {
            this.bytes = bytes;
            this.start = start;
            this.end = end;
            int hash = 1;
            for (int i = start; i < end; i++) {
                hash = 31 * hash + bytes[i];
            }
            this.hash = hash;
        }

        SchemaBytes copy()
        {
            return new SchemaBytes(Arrays.copyOfRange(bytes, start, end), 0, end - start);
        }

        @Override
        public boolean equals(Object other)
        {
            return other instanceof SchemaBytes that && hash == that.hash
                    && Arrays.equals(bytes, start, end, that.bytes, that.start, that.end);
        }

        @Override
        public int hashCode()
        {
            return hash;
        }
    }
}
