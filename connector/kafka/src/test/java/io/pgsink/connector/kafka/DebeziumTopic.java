package io.pgsink.connector.kafka;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.jetbrains.annotations.Nullable;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Writes the change events of one table to a Kafka topic as the Debezium PostgreSQL connector
 * (3.x) does with {@code JsonConverter} and {@code schemas.enable=true}: key struct
 * {@code <prefix>.<schema>.<table>.Key} of the primary-key columns, value envelope
 * {@code <prefix>.<schema>.<table>.Envelope} with {@code before}, {@code after}, {@code source}
 * ({@code io.debezium.connector.postgresql.Source}), {@code transaction}, {@code op},
 * {@code ts_ms}, {@code ts_us}, {@code ts_ns}; a tombstone (key, null value) after each delete;
 * truncates ({@code op=t}) without a key. Records go to the partition the test names, as a
 * key-hashing producer would put one key's records into one partition.
 */
final class DebeziumTopic
{
    static final Schema SOURCE = SchemaBuilder.struct().name("io.debezium.connector.postgresql.Source")
            .field("version", Schema.STRING_SCHEMA)
            .field("connector", Schema.STRING_SCHEMA)
            .field("name", Schema.STRING_SCHEMA)
            .field("ts_ms", Schema.INT64_SCHEMA)
            .field("snapshot", SchemaBuilder.string().optional().name("io.debezium.data.Enum").version(1)
                    .parameter("allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental").defaultValue("false").build())
            .field("db", Schema.STRING_SCHEMA)
            .field("sequence", Schema.OPTIONAL_STRING_SCHEMA)
            .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
            .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
            .field("schema", Schema.STRING_SCHEMA)
            .field("table", Schema.STRING_SCHEMA)
            .field("txId", Schema.OPTIONAL_INT64_SCHEMA)
            .field("lsn", Schema.OPTIONAL_INT64_SCHEMA)
            .field("xmin", Schema.OPTIONAL_INT64_SCHEMA)
            .build();
    static final Schema TRANSACTION = SchemaBuilder.struct().optional().name("event.block").version(1)
            .field("id", Schema.STRING_SCHEMA)
            .field("total_order", Schema.INT64_SCHEMA)
            .field("data_collection_order", Schema.INT64_SCHEMA)
            .build();

    private final String prefix;
    private final String schema;
    private final String table;
    private final String topic;
    @Nullable
    private final Schema keySchema;
    private final Schema rowSchema;
    private final Schema envelopeSchema;
    private final JsonConverter keys = converter(true);
    private final JsonConverter values = converter(false);
    /** Connect's default header converter, which a Debezium source connector's worker writes headers with. */
    private final SimpleHeaderConverter headers = new SimpleHeaderConverter();
    // written by the producer's thread too when asynchronous
    private final Map<Integer, Long> lastOffsets = new ConcurrentHashMap<>();
    private final AtomicReference<Exception> asynchronousFailure = new AtomicReference<>();
    private boolean asynchronous;
    private boolean contextHeaders;
    /** The records sent, tombstones included. */
    private long records;
    private long lsn = 100_000;
    private long transaction = 700;

    /**
     * @param keyColumns the primary-key columns, in key order; empty for a table without a key
     * @param columns the row's fields, as Debezium builds them (logical types, optional when nullable)
     */
    DebeziumTopic(String prefix, String schema, String table, List<String> keyColumns, List<Field> columns)
    {
        this.prefix = prefix;
        this.schema = schema;
        this.table = table;
        this.topic = prefix + "." + schema + "." + table;
        String name = prefix + "." + schema + "." + table;
        SchemaBuilder row = SchemaBuilder.struct().name(name + ".Value").optional();
        for (Field column : columns) {
            row.field(column.name(), column.schema());
        }
        this.rowSchema = row.build();
        if (keyColumns.isEmpty()) {
            this.keySchema = null;
        }
        else {
            SchemaBuilder key = SchemaBuilder.struct().name(name + ".Key");
            for (String column : keyColumns) {
                key.field(column, rowSchema.field(column).schema());
            }
            this.keySchema = key.build();
        }
        this.envelopeSchema = SchemaBuilder.struct().name(name + ".Envelope").version(2)
                .field("before", rowSchema)
                .field("after", rowSchema)
                .field("source", SOURCE)
                .field("transaction", TRANSACTION)
                .field("op", Schema.STRING_SCHEMA)
                .field("ts_ms", Schema.OPTIONAL_INT64_SCHEMA)
                .field("ts_us", Schema.OPTIONAL_INT64_SCHEMA)
                .field("ts_ns", Schema.OPTIONAL_INT64_SCHEMA)
                .build();
    }

    private static JsonConverter converter(boolean key)
    {
        JsonConverter converter = new JsonConverter();
        // as the source connector configuration of docs/guides/kafka-connect.md: a NULL is written as null, also where the column has a default
        converter.configure(Map.of("schemas.enable", "true", "replace.null.with.default", "false"), key);
        return converter;
    }

    /** From now on records are sent without waiting for each one's acknowledgement; {@link #flush} waits for them all. */
    DebeziumTopic asynchronous()
    {
        asynchronous = true;
        return this;
    }

    /**
     * From now on every record carries the context headers a Debezium 3 source connector adds to each
     * ({@code __debezium.context.connectorLogicalName}, {@code .taskId}, {@code .connectorName}; strings
     * written by {@code SimpleHeaderConverter}), which a sink's worker converts whether the sink reads them or not.
     */
    DebeziumTopic withContextHeaders()
    {
        contextHeaders = true;
        return this;
    }

    /** The records sent so far, tombstones included. */
    long records()
    {
        return records;
    }

    /** Waits until every record sent is acknowledged; fails if one was not written. */
    void flush(KafkaProducer<byte[], byte[]> producer)
    {
        producer.flush();
        Exception failure = asynchronousFailure.get();
        if (failure != null) {
            throw new IllegalStateException("Cannot write to " + topic, failure);
        }
    }

    String topic()
    {
        return topic;
    }

    Struct row(Object... namesAndValues)
    {
        Struct row = new Struct(rowSchema);
        for (int i = 0; i < namesAndValues.length; i += 2) {
            row.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return row;
    }

    /** The highest offset written per partition. */
    Map<Integer, Long> lastOffsets()
    {
        return Map.copyOf(lastOffsets);
    }

    void read(KafkaProducer<byte[], byte[]> producer, int partition, Struct after)
    {
        send(producer, partition, keyOf(after), envelope("r", null, after, "true"));
    }

    void insert(KafkaProducer<byte[], byte[]> producer, int partition, Struct after)
    {
        send(producer, partition, keyOf(after), envelope("c", null, after, "false"));
    }

    void update(KafkaProducer<byte[], byte[]> producer, int partition, @Nullable Struct before, Struct after)
    {
        send(producer, partition, keyOf(after), envelope("u", before, after, "false"));
    }

    /** A delete and the tombstone Debezium writes after it ({@code tombstones.on.delete=true}, its default). */
    void delete(KafkaProducer<byte[], byte[]> producer, int partition, Struct before)
    {
        Struct key = keyOf(before);
        send(producer, partition, key, envelope("d", before, null, "false"));
        send(producer, partition, key, null);
    }

    /**
     * The first half of a primary-key change: the delete of the old key, marked with the new key
     * ({@code __debezium.newkey}), and, with {@code tombstone}, the tombstone after it, marked alike.
     */
    void keyChangeDelete(KafkaProducer<byte[], byte[]> producer, int partition, Struct before, Struct newKeyRow, boolean tombstone)
    {
        Struct key = keyOf(before);
        RecordHeaders marks = keyHeader("__debezium.newkey", newKeyRow);
        send(producer, partition, key, envelope("d", before, null, "false"), marks);
        if (tombstone) {
            send(producer, partition, key, null, marks);
        }
    }

    /** The second half of a primary-key change: the create of the new key, marked with the old key ({@code __debezium.oldkey}). */
    void keyChangeCreate(KafkaProducer<byte[], byte[]> producer, int partition, Struct after, Struct oldKeyRow)
    {
        send(producer, partition, keyOf(after), envelope("c", null, after, "false"), keyHeader("__debezium.oldkey", oldKeyRow));
    }

    private RecordHeaders keyHeader(String name, Struct row)
    {
        RecordHeaders marks = new RecordHeaders();
        marks.add(name, headers.fromConnectHeader(topic, name, keySchema, keyOf(row)));
        return marks;
    }

    void truncate(KafkaProducer<byte[], byte[]> producer, int partition)
    {
        send(producer, partition, null, envelope("t", null, null, "false"));
    }

    @Nullable
    private Struct keyOf(Struct row)
    {
        if (keySchema == null) {
            return null;
        }
        Struct key = new Struct(keySchema);
        for (Field field : keySchema.fields()) {
            key.put(field, row.get(field.name()));
        }
        return key;
    }

    private Struct envelope(String op, @Nullable Struct before, @Nullable Struct after, String snapshot)
    {
        long now = System.currentTimeMillis();
        lsn += 64;
        transaction++;
        Struct source = new Struct(SOURCE)
                .put("version", "3.6.3.Final")
                .put("connector", "postgresql")
                .put("name", prefix)
                .put("ts_ms", now - 5)
                .put("snapshot", snapshot)
                .put("db", "shop")
                .put("sequence", "[null,\"" + lsn + "\"]")
                .put("ts_us", (now - 5) * 1000)
                .put("ts_ns", (now - 5) * 1_000_000)
                .put("schema", schema)
                .put("table", table)
                .put("txId", transaction)
                .put("lsn", lsn)
                .put("xmin", null);
        return new Struct(envelopeSchema)
                .put("before", before)
                .put("after", after)
                .put("source", source)
                .put("transaction", null)
                .put("op", op)
                .put("ts_ms", now)
                .put("ts_us", now * 1000)
                .put("ts_ns", now * 1_000_000);
    }

    private void send(KafkaProducer<byte[], byte[]> producer, int partition, @Nullable Struct key, @Nullable Struct value)
    {
        send(producer, partition, key, value, new RecordHeaders());
    }

    private void context(RecordHeaders recordHeaders, String name, String value)
    {
        String header = "__debezium.context." + name;
        recordHeaders.add(header, headers.fromConnectHeader(topic, header, Schema.STRING_SCHEMA, value));
    }

    private void send(KafkaProducer<byte[], byte[]> producer, int partition, @Nullable Struct key, @Nullable Struct value, RecordHeaders recordHeaders)
    {
        byte[] keyBytes = key == null ? null : keys.fromConnectData(topic, keySchema, key);
        byte[] valueBytes = value == null ? null : values.fromConnectData(topic, envelopeSchema, value);
        if (contextHeaders) {
            context(recordHeaders, "connectorLogicalName", prefix);
            context(recordHeaders, "taskId", "0");
            context(recordHeaders, "connectorName", prefix + "-source");
        }
        records++;
        ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, partition, null, keyBytes, valueBytes, recordHeaders);
        if (asynchronous) {
            producer.send(record, (written, failure) -> {
                if (failure != null) {
                    asynchronousFailure.compareAndSet(null, failure);
                }
                else {
                    lastOffsets.merge(partition, written.offset(), Math::max);
                }
            });
            return;
        }
        try {
            RecordMetadata written = producer.send(record).get(30, TimeUnit.SECONDS);
            lastOffsets.merge(partition, written.offset(), Math::max);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Cannot write to " + topic + " partition " + partition, e);
        }
    }
}
