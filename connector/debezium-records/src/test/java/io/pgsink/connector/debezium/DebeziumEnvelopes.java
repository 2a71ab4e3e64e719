package io.pgsink.connector.debezium;

import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;

import java.util.Map;

/**
 * Builds records shaped like the Debezium PostgreSQL connector's: key struct of the primary-key
 * columns, envelope with before/after/source/op/ts_ms. Only the parts the mapper reads.
 */
public final class DebeziumEnvelopes
{
    public static final Schema SOURCE = SchemaBuilder.struct().name("io.debezium.connector.postgresql.Source")
            .field("version", Schema.STRING_SCHEMA)
            .field("connector", Schema.STRING_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("ts_ms", Schema.INT64_SCHEMA)
            .field("db", Schema.STRING_SCHEMA)
            .field("schema", Schema.STRING_SCHEMA)
            .field("table", Schema.STRING_SCHEMA)
            .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
            .build();

    private final Schema keySchema;
    private final Schema rowSchema;
    private final Schema envelopeSchema;
    private final String schema;
    private final String table;

    public DebeziumEnvelopes(String schema, String table, @Nullable Schema keySchema, Schema rowSchema)
    {
        this.schema = schema;
        this.table = table;
        this.keySchema = keySchema;
        this.rowSchema = optional(rowSchema);
        this.envelopeSchema = SchemaBuilder.struct().name("srv." + schema + "." + table + ".Envelope")
                .field("before", this.rowSchema)
                .field("after", this.rowSchema)
                .field("source", SOURCE)
                .field("op", Schema.STRING_SCHEMA)
                .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
                .build();
    }

    /** Debezium's row schemas are optional structs: before is null for inserts, after for deletes. */
    private static Schema optional(Schema row)
    {
        if (row.isOptional()) {
            return row;
        }
        SchemaBuilder builder = SchemaBuilder.struct().name(row.name()).optional();
        for (Field field : row.fields()) {
            builder.field(field.name(), field.schema());
        }
        return builder.build();
    }

    public Struct row()
    {
        return new Struct(rowSchema);
    }

    public Struct key(Object... values)
    {
        Struct key = new Struct(keySchema);
        for (int i = 0; i < values.length; i++) {
            key.put(keySchema.fields().get(i), values[i]);
        }
        return key;
    }

    public SourceRecord record(String op, @Nullable Struct key, @Nullable Struct before, @Nullable Struct after, long sourceMillis)
    {
        Struct source = new Struct(SOURCE)
                .put("version", "3.6.3.Final")
                .put("connector", "postgresql")
                .put("name", "srv")
                .put("ts_ms", sourceMillis)
                .put("db", "app")
                .put("schema", schema)
                .put("table", table)
                .put("lsn", 4711L);
        Struct envelope = new Struct(envelopeSchema)
                .put("before", before)
                .put("after", after)
                .put("source", source)
                .put("op", op)
                .put("ts_ms", sourceMillis + 5);
        return new SourceRecord(Map.of("server", "srv"), Map.of("lsn", 4711L), "srv." + schema + "." + table, keySchema, key, envelopeSchema, envelope);
    }

    public SourceRecord truncate(long sourceMillis)
    {
        return record("t", null, null, null, sourceMillis);
    }
}
