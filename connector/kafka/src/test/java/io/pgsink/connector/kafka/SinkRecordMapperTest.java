package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.DebeziumEnvelopes;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

import java.time.LocalDateTime;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SinkRecordMapperTest
{
    private static final String TOPIC = "srv.public.orders";
    private static final SourcePosition POSITION = new SourcePosition(TOPIC + "-0", "41");
    private static final Schema KEY = SchemaBuilder.struct().name("srv.public.orders.Key").field("id", Schema.INT64_SCHEMA).build();
    private static final Schema MICRO_TIMESTAMP = SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").version(1).optional().build();
    private static final Schema ROW = SchemaBuilder.struct().name("srv.public.orders.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("status", Schema.OPTIONAL_STRING_SCHEMA)
            .field("placed", MICRO_TIMESTAMP)
            .build();
    /** ExtractNewRecordState with delete.tombstone.handling.mode=rewrite and add.fields=op,source.schema,source.table. */
    private static final Schema FLATTENED = SchemaBuilder.struct().name("srv.public.orders.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("status", Schema.OPTIONAL_STRING_SCHEMA)
            .field("placed", MICRO_TIMESTAMP)
            .field("__op", Schema.OPTIONAL_STRING_SCHEMA)
            .field("__source_schema", Schema.OPTIONAL_STRING_SCHEMA)
            .field("__source_table", Schema.OPTIONAL_STRING_SCHEMA)
            .field("__deleted", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    private static final long PLACED_MICROS = 1_700_000_000_123_456L;
    private static final LocalDateTime PLACED = LocalDateTime.of(2023, 11, 14, 22, 13, 20, 123_456_000);

    private final DebeziumEnvelopes orders = new DebeziumEnvelopes("public", "orders", KEY, ROW);

    private static SinkRecordMapper mapper(Map<String, String> overrides)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("name", "test");
        properties.put("target.url", "jdbc:postgresql://localhost/test");
        properties.putAll(overrides);
        return new SinkRecordMapper(KafkaSinkConfig.parse(properties));
    }

    private static SinkRecord sink(SourceRecord record)
    {
        return new SinkRecord(TOPIC, 0, record.keySchema(), record.key(), record.valueSchema(), record.value(), 41);
    }

    private Struct order(long id, String status)
    {
        return orders.row().put("id", id).put("status", status).put("placed", PLACED_MICROS);
    }

    private static Struct flattened(long id, String status, String operation, boolean deleted)
    {
        return new Struct(FLATTENED).put("id", id).put("status", status).put("placed", PLACED_MICROS)
                .put("__op", operation).put("__source_schema", "shop").put("__source_table", "orders").put("__deleted", String.valueOf(deleted));
    }

    private static Struct key(long id)
    {
        return new Struct(KEY).put("id", id);
    }

    private static SinkRecord record(Schema valueSchema, Object value, Struct key)
    {
        return new SinkRecord(TOPIC, 0, KEY, key, valueSchema, value, 41);
    }

    @Test
    void envelopesAreRouted()
    {
        SinkRecordMapper mapper = mapper(Map.of("target.table.name.format", "raw.${topic}"));
        ChangeEvent insert = mapper.map(sink(orders.record("c", orders.key(1L), null, order(1, "new"), 1000)), POSITION).orElseThrow();
        assertThat(insert.table()).isEqualTo(TableId.of("raw", "srv_public_orders"));
        assertThat(insert.operation()).isEqualTo(Operation.INSERT);
        assertThat(insert.after()).containsExactly(1L, "new", PLACED);
        assertThat(insert.schema().keyColumns()).containsExactly("id");
        assertThat(insert.position()).isEqualTo(POSITION);

        ChangeEvent update = mapper.map(sink(orders.record("u", orders.key(1L), order(1, "new"), order(1, "paid"), 2000)), POSITION).orElseThrow();
        assertThat(update.operation()).isEqualTo(Operation.UPDATE);
        assertThat(update.before()).containsExactly(1L, "new", PLACED);
        // one schema instance per table version, so the buffer compares versions by identity
        assertThat(update.schema()).isSameAs(insert.schema());

        ChangeEvent delete = mapper.map(sink(orders.record("d", orders.key(1L), order(1, "paid"), null, 3000)), POSITION).orElseThrow();
        assertThat(delete.operation()).isEqualTo(Operation.DELETE);
        assertThat(delete.schema()).isSameAs(insert.schema());

        ChangeEvent truncate = mapper.map(sink(orders.truncate(4000)), POSITION).orElseThrow();
        assertThat(truncate.operation()).isEqualTo(Operation.TRUNCATE);
        assertThat(truncate.table()).isEqualTo(TableId.of("raw", "srv_public_orders"));
    }

    @Test
    void envelopesKeepTheirSourceTableByDefault()
    {
        SinkRecordMapper mapper = mapper(Map.of());
        ChangeEvent insert = mapper.map(sink(orders.record("r", orders.key(1L), null, order(1, "new"), 1000)), POSITION).orElseThrow();
        assertThat(insert.table()).isEqualTo(TableId.of("public", "orders"));
        assertThat(insert.operation()).isEqualTo(Operation.READ);
        // Debezium's tombstone after a delete adds nothing to it
        assertThat(mapper.map(record(null, null, key(1)), POSITION)).isEmpty();
    }

    @Test
    void flattenedRecords()
    {
        SinkRecordMapper mapper = mapper(Map.of("target.table.name.format", "dw.${source.table}"));
        ChangeEvent insert = mapper.map(record(FLATTENED, flattened(1, "new", "c", false), key(1)), POSITION).orElseThrow();
        assertThat(insert.table()).isEqualTo(TableId.of("dw", "orders"));
        assertThat(insert.operation()).isEqualTo(Operation.INSERT);
        // metadata fields are no columns; logical types convert as in envelopes
        assertThat(insert.schema().columnNames()).containsExactly("id", "status", "placed");
        assertThat(insert.schema().keyColumns()).containsExactly("id");
        assertThat(insert.after()).containsExactly(1L, "new", PLACED);

        ChangeEvent read = mapper.map(record(FLATTENED, flattened(2, "new", "r", false), key(2)), POSITION).orElseThrow();
        assertThat(read.operation()).isEqualTo(Operation.READ);
        assertThat(read.schema()).isSameAs(insert.schema());

        ChangeEvent update = mapper.map(record(FLATTENED, flattened(1, "paid", "u", false), key(1)), POSITION).orElseThrow();
        assertThat(update.operation()).isEqualTo(Operation.UPDATE);
        assertThat(update.before()).isNull();
        assertThat(update.after()).containsExactly(1L, "paid", PLACED);

        // delete.tombstone.handling.mode=rewrite: the before image with __deleted=true
        ChangeEvent delete = mapper.map(record(FLATTENED, flattened(1, "paid", "d", true), key(1)), POSITION).orElseThrow();
        assertThat(delete.operation()).isEqualTo(Operation.DELETE);
        assertThat(delete.before()).containsExactly(1L, "paid", PLACED);
        assertThat(delete.schema()).isSameAs(insert.schema());
    }

    @Test
    void flattenedRecordsWithoutMetadataAreUpserts()
    {
        SinkRecordMapper mapper = mapper(Map.of("target.table.name.format", "${topic}"));
        Struct row = new Struct(ROW).put("id", 7L).put("status", UnavailablePlaceholder.DEFAULT).put("placed", null);
        ChangeEvent upsert = mapper.map(record(ROW, row, key(7)), POSITION).orElseThrow();
        assertThat(upsert.table()).isEqualTo(TableId.of("public", "srv_public_orders"));
        assertThat(upsert.operation()).isEqualTo(Operation.UPDATE);
        assertThat(upsert.after()).containsExactly(7L, UnavailableValue.INSTANCE, null);

        // ExtractNewRecordState's default (tombstone) mode: a delete is the row schema without a value
        ChangeEvent delete = mapper.map(record(ROW, null, key(7)), POSITION).orElseThrow();
        assertThat(delete.operation()).isEqualTo(Operation.DELETE);
        assertThat(delete.before()).containsExactly(7L, null, null);
        assertThat(delete.schema()).isSameAs(upsert.schema());
    }

    @Test
    void sourceTableFromHeaders()
    {
        SinkRecordMapper mapper = mapper(Map.of("target.table.name.format", "${schema}.${table}"));
        ConnectHeaders headers = new ConnectHeaders();
        headers.addString("__source_schema", "shop");
        headers.addString("__source_table", "orders");
        headers.addString("__op", "d");
        SinkRecord deleted = new SinkRecord(TOPIC, 0, KEY, key(3), ROW, null, 41, 5000L, org.apache.kafka.common.record.TimestampType.CREATE_TIME, headers);
        ChangeEvent delete = mapper.map(deleted, POSITION).orElseThrow();
        assertThat(delete.table()).isEqualTo(TableId.of("shop", "orders"));
        assertThat(delete.operation()).isEqualTo(Operation.DELETE);
        assertThat(delete.sourceTimeMillis()).isEqualTo(5000);

        assertThatThrownBy(() -> mapper.map(record(ROW, new Struct(ROW).put("id", 1L), key(1)), POSITION))
                .isInstanceOf(SinkException.class)
                .hasMessage("Record of topic srv.public.orders at offset 41 of srv.public.orders-0 does not name its source table, which target.table.name.format ${schema}.${table} needs: "
                        + "flattened records and tombstones name it only in __source_schema and __source_table (ExtractNewRecordState with add.fields=source.schema,source.table, "
                        + "or add.headers for deletes); or route by ${topic}");
    }

    @Test
    void tombstonesDeleteWhenAsked()
    {
        SinkRecordMapper mapper = mapper(Map.of("target.table.name.format", "dw.orders", "delete.on.tombstone", "true"));
        // before any row of the table: its key is all the sink knows of it
        ChangeEvent first = mapper.map(record(null, null, key(5)), POSITION).orElseThrow();
        assertThat(first.operation()).isEqualTo(Operation.DELETE);
        assertThat(first.table()).isEqualTo(TableId.of("dw", "orders"));
        assertThat(first.schema().columnNames()).containsExactly("id");
        assertThat(first.before()).containsExactly(5L);

        ChangeEvent insert = mapper.map(sink(orders.record("c", orders.key(6L), null, order(6, "new"), 1000)), POSITION).orElseThrow();
        // afterwards, the table's row shape: the buffer keeps one schema for the table
        ChangeEvent delete = mapper.map(record(null, null, key(6)), POSITION).orElseThrow();
        assertThat(delete.schema()).isSameAs(insert.schema());
        assertThat(delete.before()).containsExactly(6L, null, null);
    }

    /**
     * Kafka Connect goes through the standalone service's mapper: a MicroTimestamp Debezium
     * overflowed (294276-12-31 23:59:59.999999 arrives as {@code Long.MIN_VALUE + 999998}, see
     * DebeziumRecordMapperTest) is refused with the table, key and column, in envelopes and in
     * flattened records alike, instead of written as a year -290308 that PostgreSQL refuses.
     */
    @Test
    void timestampsAMicroTimestampCannotHoldAreRefused()
    {
        long wrapped = Long.MIN_VALUE + 999_998;
        SinkRecordMapper mapper = mapper(Map.of());
        Struct after = orders.row().put("id", 3L).put("status", "far").put("placed", wrapped);
        assertThatThrownBy(() -> mapper.map(sink(orders.record("c", orders.key(3L), null, after, 1000)), POSITION))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA))
                .hasMessageStartingWith("Cannot convert column placed of \"public\".\"orders\" key (3)"
                        + " at offset 41 of srv.public.orders-0: a timestamp after 294247-01-10 04:00:54.775807");

        SinkRecordMapper flattenedMapper = mapper(Map.of("target.table.name.format", "dw.${source.table}"));
        Struct row = flattened(4, "far", "c", false).put("placed", Long.MAX_VALUE);
        assertThatThrownBy(() -> flattenedMapper.map(record(FLATTENED, row, key(4)), POSITION))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA))
                .hasMessageStartingWith("Cannot convert column placed of \"dw\".\"orders\" key (4)"
                        + " at offset 41 of srv.public.orders-0: a timestamp after 294247-01-10 04:00:54.775807");
    }

    @Test
    void badRecordsNameWhereAndWhy()
    {
        SinkRecordMapper mapper = mapper(Map.of());
        assertThatThrownBy(() -> mapper.map(new SinkRecord(TOPIC, 0, null, null, null, Map.of("id", 1), 41), POSITION))
                .isInstanceOf(SinkException.class)
                .hasMessageStartingWith("Record of topic srv.public.orders at offset 41 of srv.public.orders-0 is not a Debezium change event: its value is a java.util.");

        SinkRecordMapper byTopic = mapper(Map.of("target.table.name.format", "${topic}"));
        assertThatThrownBy(() -> byTopic.map(new SinkRecord(TOPIC, 0, Schema.STRING_SCHEMA, "1", ROW, new Struct(ROW).put("id", 1L), 41), POSITION))
                .isInstanceOf(SinkException.class)
                .hasMessage("Record of topic srv.public.orders at offset 41 of srv.public.orders-0 has a key of type java.lang.String, not a struct of the key columns "
                        + "(use a key converter that keeps schemas, e.g. JsonConverter with schemas.enable=true)");

        Schema badTimestamp = SchemaBuilder.struct().name("srv.public.orders.Value").field("id", Schema.INT64_SCHEMA).field("placed", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().build()).build();
        assertThatThrownBy(() -> byTopic.map(record(badTimestamp, new Struct(badTimestamp).put("id", 9L).put("placed", "yesterday"), key(9)), POSITION))
                .isInstanceOf(SinkException.class)
                .satisfies(e -> assertThat(((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA))
                .hasMessageStartingWith("Cannot convert column placed of \"public\".\"srv_public_orders\" key (9) at offset 41 of srv.public.orders-0: ");

        Schema noKeyColumn = SchemaBuilder.struct().field("status", Schema.STRING_SCHEMA).build();
        assertThatThrownBy(() -> byTopic.map(record(noKeyColumn, new Struct(noKeyColumn).put("status", "x"), key(1)), POSITION))
                .isInstanceOf(SinkException.class)
                .hasMessageStartingWith("Records of \"public\".\"srv_public_orders\" at offset 41 of srv.public.orders-0 do not describe a table: Key column id is not a column");
        assertThat(byTopic.map(record(null, null, key(1)), POSITION)).isEqualTo(Optional.empty());
    }
}
