package io.pgsink.bench.workload;

import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.sink.SinkRecord;

import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * A workload's changes as the Kafka Connect records a sink task receives from topics written by
 * the Debezium PostgreSQL connector (full envelope, {@code decimal.handling.mode=precise}, default
 * replica identity): inserts {@code op=c} with {@code after}, updates {@code op=u} with
 * {@code after} and no {@code before}, deletes {@code op=d} with a {@code before} image holding
 * only the key, each with the record key {@code {id}}. Tombstones are left out (the Debezium JDBC
 * sink and pgsink both ignore them when the delete event came first). numeric is a Connect
 * {@code Decimal}, timestamptz an {@code io.debezium.time.ZonedTimestamp} string.
 */
public final class ConnectRecords
{
    public static final String TOPIC = "bench.source.orders";

    private final Columns columns;
    private final Schema keySchema;
    private final Schema rowSchema;
    private final Schema sourceSchema;
    private final Schema envelopeSchema;
    private final Struct source;

    ConnectRecords(Columns columns)
    {
        this.columns = requireNonNull(columns, "columns is null");
        keySchema = SchemaBuilder.struct().name("bench.source.orders.Key").field("id", Schema.INT64_SCHEMA).build();
        SchemaBuilder row = SchemaBuilder.struct().name("bench.source.orders.Value").optional();
        for (Columns.Column column : columns.columns) {
            row.field(column.name(), schema(column.kind()));
        }
        rowSchema = row.build();
        sourceSchema = SchemaBuilder.struct().name("io.debezium.connector.postgresql.Source")
                .field("version", Schema.STRING_SCHEMA)
                .field("connector", Schema.STRING_SCHEMA)
                .field("name", Schema.STRING_SCHEMA)
                .field("ts_ms", Schema.INT64_SCHEMA)
                .field("db", Schema.STRING_SCHEMA)
                .field("schema", Schema.STRING_SCHEMA)
                .field("table", Schema.STRING_SCHEMA)
                .build();
        envelopeSchema = SchemaBuilder.struct().name("bench.source.orders.Envelope").version(2)
                .field("before", rowSchema)
                .field("after", rowSchema)
                .field("source", sourceSchema)
                .field("op", Schema.STRING_SCHEMA)
                .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
                .build();
        source = new Struct(sourceSchema)
                .put("version", "3.6.3.Final")
                .put("connector", "postgresql")
                .put("name", "bench")
                .put("ts_ms", 1_700_000_000_000L)
                .put("db", "source")
                .put("schema", "source")
                .put("table", "orders");
    }

    private static Schema schema(Columns.Kind kind)
    {
        return switch (kind) {
            case KEY -> Schema.INT64_SCHEMA;
            case BIGINT -> Schema.OPTIONAL_INT64_SCHEMA;
            case INTEGER -> Schema.OPTIONAL_INT32_SCHEMA;
            case TEXT, LARGE_TEXT -> Schema.OPTIONAL_STRING_SCHEMA;
            case NUMERIC -> Decimal.builder(2).parameter("connect.decimal.precision", "12").optional().build();
            case BOOLEAN -> Schema.OPTIONAL_BOOLEAN_SCHEMA;
            case TIMESTAMPTZ -> SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").version(1).optional()
                    .build();
            case DOUBLE -> Schema.OPTIONAL_FLOAT64_SCHEMA;
        };
    }

    /** Every change of {@code workload} as a record, Kafka offsets 0, 1, 2... of partition 0. */
    List<SinkRecord> records(Workload workload)
    {
        List<SinkRecord> records = new ArrayList<>(workload.changes.size());
        long offset = 0;
        for (Workload.Change change : workload.changes) {
            records.add(record(change, offset++));
        }
        return records;
    }

    SinkRecord record(Workload.Change change, long offset)
    {
        Struct key = new Struct(keySchema).put("id", change.key());
        Struct envelope = new Struct(envelopeSchema).put("source", source).put("ts_ms", 1_700_000_000_000L);
        switch (change.kind()) {
            case INSERT -> envelope.put("op", "c").put("after", row(change.row()));
            case UPDATE -> envelope.put("op", "u").put("after", row(change.row()));
            case DELETE -> envelope.put("op", "d").put("before", new Struct(rowSchema).put("id", change.key()));
        }
        return new SinkRecord(TOPIC, 0, keySchema, key, envelopeSchema, envelope, offset);
    }

    private Struct row(Object[] values)
    {
        Struct row = new Struct(rowSchema);
        for (Columns.Column column : columns.columns) {
            Object value = values[column.index()];
            row.put(column.name(), column.kind() == Columns.Kind.TIMESTAMPTZ
                    ? DateTimeFormatter.ISO_OFFSET_DATE_TIME.format((OffsetDateTime) value) : value);
        }
        return row;
    }
}
