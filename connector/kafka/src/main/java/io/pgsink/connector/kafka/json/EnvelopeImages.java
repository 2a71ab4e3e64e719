package io.pgsink.connector.kafka.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.jetbrains.annotations.Nullable;

import java.io.IOException;

/**
 * What the mapping of a Debezium change event needs of its envelope's payload, read straight from
 * the JSON without building its structs (issue #29): {@code op}, the {@code before} and
 * {@code after} images as their fields' values (as a struct of the row schema would hold them,
 * read by {@link JsonValues}), and of the {@code source} block only {@code schema}, {@code table}
 * and {@code ts_ms}; the rest of the envelope ({@code transaction}, {@code ts_us}, the other source
 * fields) is skipped, not checked against its schema.
 *
 * <p>Only the common case is read here: an envelope schema with optional struct images, a payload
 * with a text {@code op} and a source block naming its table with a number {@code ts_ms}. Anything
 * else is left to the struct path ({@link #read} returns null), which reads it as before and names
 * what is wrong.
 *
 * <p>Immutable.
 */
public final class EnvelopeImages
{
    private final String op;
    @Nullable
    private final Object[] before;
    @Nullable
    private final Object[] after;
    private final Schema beforeSchema;
    private final Schema afterSchema;
    private final String sourceSchema;
    private final String sourceTable;
    private final long sourceMillis;

    private EnvelopeImages(String op, @Nullable Object[] before, @Nullable Object[] after, Schema beforeSchema,
            Schema afterSchema, String sourceSchema, String sourceTable, long sourceMillis)
    {
        this.op = op;
        this.before = before;
        this.after = after;
        this.beforeSchema = beforeSchema;
        this.afterSchema = afterSchema;
        this.sourceSchema = sourceSchema;
        this.sourceTable = sourceTable;
        this.sourceMillis = sourceMillis;
    }

    /** Whether {@code envelope} is a schema whose payloads {@link #read} reads. */
    static boolean readable(Schema envelope)
    {
        if (envelope.type() != Schema.Type.STRUCT) {
            return false;
        }
        Field before = envelope.field("before");
        Field after = envelope.field("after");
        Field op = envelope.field("op");
        Field source = envelope.field("source");
        return before != null && after != null && op != null && source != null
                && before.schema().type() == Schema.Type.STRUCT && before.schema().isOptional()
                && after.schema().type() == Schema.Type.STRUCT && after.schema().isOptional()
                && op.schema().type() == Schema.Type.STRING && source.schema().type() == Schema.Type.STRUCT;
    }

    /**
     * Reads the payload in {@code json} from {@code start} to {@code end} of a {@link #readable}
     * envelope schema; null when it is not the common case.
     *
     * @throws org.apache.kafka.connect.errors.DataException when an image does not hold its schema's values
     */
    @Nullable
    static EnvelopeImages read(byte[] json, int start, int end, Schema envelope)
            throws IOException
    {
        Schema beforeSchema = envelope.field("before").schema();
        Schema afterSchema = envelope.field("after").schema();
        Object[] before = null;
        Object[] after = null;
        String op = null;
        Source source = null;
        try (JsonParser parser = JsonEnvelopeReader.parser(json, start, end - start)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (parser.nextToken() == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken token = parser.nextToken();
                switch (name) {
                    case "before" -> before = image(parser, beforeSchema, token);
                    case "after" -> after = image(parser, afterSchema, token);
                    case "op" -> op = token == JsonToken.VALUE_STRING ? parser.getText() : null;
                    case "source" -> source = source(parser, token);
                    default -> parser.skipChildren();
                }
            }
            if (parser.nextToken() != null || op == null || source == null) {
                return null;
            }
        }
        return new EnvelopeImages(op, before, after, beforeSchema, afterSchema, source.schema, source.table,
                source.millis);
    }

    @Nullable
    private static Object[] image(JsonParser parser, Schema schema, JsonToken token)
            throws IOException
    {
        return token == JsonToken.VALUE_NULL ? null : JsonValues.fields(parser, schema, token, null);
    }

    /** The source block's schema, table and ts_ms; null when one is missing or not of its usual type. */
    @Nullable
    private static Source source(JsonParser parser, JsonToken token)
            throws IOException
    {
        if (token != JsonToken.START_OBJECT) {
            parser.skipChildren();
            return null;
        }
        String schema = null;
        String table = null;
        Long millis = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            if (name.equals("schema") && value == JsonToken.VALUE_STRING) {
                schema = parser.getText();
            }
            else if (name.equals("table") && value == JsonToken.VALUE_STRING) {
                table = parser.getText();
            }
            else if (name.equals("ts_ms") && value == JsonToken.VALUE_NUMBER_INT) {
                millis = parser.getLongValue();
            }
            else {
                parser.skipChildren();
            }
        }
        return schema == null || table == null || millis == null ? null : new Source(schema, table, millis);
    }

    private record Source(String schema, String table, long millis) {}

    public String op()
    {
        return op;
    }

    /** The before image's fields' values, indexed as the fields of {@link #beforeSchema}; null when it has none. */
    @Nullable
    public Object[] before()
    {
        return before;
    }

    /** The after image's fields' values, indexed as the fields of {@link #afterSchema}; null when it has none. */
    @Nullable
    public Object[] after()
    {
        return after;
    }

    public Schema beforeSchema()
    {
        return beforeSchema;
    }

    public Schema afterSchema()
    {
        return afterSchema;
    }

    public String sourceSchema()
    {
        return sourceSchema;
    }

    public String sourceTable()
    {
        return sourceTable;
    }

    /** The source block's {@code ts_ms}. */
    public long sourceMillis()
    {
        return sourceMillis;
    }
}
