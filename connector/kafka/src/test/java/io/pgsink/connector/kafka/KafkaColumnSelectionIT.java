package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.DebeziumEnvelopes;
import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * {@code column.include.list}, {@code column.exclude.list} and {@code column.rename} in the Kafka
 * Connect sink task: the same keys as the standalone service, checked against each table's first
 * record (a Kafka Connect sink cannot read the source catalog).
 */
@TestInstance(PER_CLASS)
class KafkaColumnSelectionIT
{
    private static final String TOPIC = "srv.public.orders";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final Schema KEY = SchemaBuilder.struct().name("srv.public.orders.Key").field("id", Schema.INT64_SCHEMA).build();
    private static final Schema ROW = SchemaBuilder.struct().name("srv.public.orders.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("status", Schema.OPTIONAL_STRING_SCHEMA)
            .field("card_number", Schema.OPTIONAL_STRING_SCHEMA)
            .field("note", Schema.OPTIONAL_STRING_SCHEMA)
            .build();

    private final DebeziumEnvelopes orders = new DebeziumEnvelopes("public", "orders", KEY, ROW);
    private final List<PgsinkSinkTask> tasks = new ArrayList<>();
    private TestingSchema schema;

    @BeforeAll
    void createSchema()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("kafka_columns");
    }

    @AfterAll
    void dropSchema()
            throws SQLException
    {
        schema.close();
    }

    @BeforeEach
    void createTables()
            throws SQLException
    {
        schema.execute("DROP TABLE IF EXISTS orders, pgsink_offsets",
                // no card_number: the sink must not write it; other names than the source's
                "CREATE TABLE orders (order_id bigint PRIMARY KEY, state varchar(8), note text)");
    }

    @AfterEach
    void stopTasks()
    {
        for (PgsinkSinkTask task : tasks) {
            task.stop();
        }
        tasks.clear();
    }

    private PgsinkSinkTask start(Map<String, String> overrides)
    {
        Map<String, String> properties = TestingConnector.properties(schema, TOPIC);
        properties.put("name", "orders-sink");
        properties.put("flush.interval.ms", "60000");
        properties.putAll(overrides);
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties, null);
        PgsinkSinkTask task = new PgsinkSinkTask();
        task.initialize(context);
        task.start(context.configs());
        tasks.add(task);
        task.open(List.of(P0));
        return task;
    }

    private SinkRecord order(String op, long id, @Nullable String status, @Nullable String note, long offset)
    {
        Struct row = op.equals("d") ? null : orders.row().put("id", id).put("status", status).put("card_number", "4111 1111 1111 " + id).put("note", note);
        Struct before = op.equals("d") ? orders.row().put("id", id) : null;
        SourceRecord record = orders.record(op, orders.key(id), before, row, 1000);
        return new SinkRecord(P0.topic(), P0.partition(), record.keySchema(), record.key(), record.valueSchema(), record.value(), offset);
    }

    private SinkRecord keyChange(String op, long id, long otherId, long offset)
    {
        SinkRecord record = order(op, id, "moved", UnavailablePlaceholder.DEFAULT, offset);
        record.headers().add(op.equals("d") ? KeyChangeHeaders.NEW_KEY : KeyChangeHeaders.OLD_KEY, orders.key(otherId), KEY);
        return record;
    }

    @Test
    void writesTheIncludedColumnsUnderTheirNewNames()
            throws SQLException
    {
        PgsinkSinkTask task = start(Map.of("column.include.list", "public\\.orders\\.(id|status|note)", "column.rename", "public.orders.id:order_id,public.orders.status:state"));
        task.put(List.of(order("c", 1, "new", "first", 0), order("c", 2, "new", "second", 1), order("c", 3, "new", "third", 2)));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(3)));
        // an update whose unchanged note Debezium did not send, a delete, a key change (its create without the note)
        task.put(List.of(order("u", 1, "paid", UnavailablePlaceholder.DEFAULT, 3), order("d", 2, null, null, 4), keyChange("d", 3, 30, 5), keyChange("c", 30, 3, 6)));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(7)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(7)));
        assertThat(query("SELECT order_id, state, note FROM orders ORDER BY order_id")).containsExactly(List.of("1", "paid", "first"), List.of("30", "moved", "third"));
    }

    @Test
    void aSelectionThatDoesNotFitTheFirstRecordFailsTheTaskNamingTableAndColumns()
            throws SQLException
    {
        PgsinkSinkTask task = start(Map.of("column.exclude.list", "public.orders.id,public.orders.card_number", "column.rename", "public.orders.state:x"));
        assertThatThrownBy(() -> task.put(List.of(order("c", 1, "new", "first", 0))))
                .isInstanceOf(ConnectException.class)
                .isNotInstanceOf(RetriableException.class)
                .hasMessageContaining("Invalid column selection for \"public\".\"orders\" (written to \"" + schema.name() + "\".\"orders\") (2 problems)")
                .hasMessageContaining("column.exclude.list: excludes key column id of \"public\".\"orders\"")
                .hasMessageContaining("column.rename: renames column state that \"public\".\"orders\" does not have (columns: [id, status, card_number, note])");
        assertThat(query("SELECT count(*) FROM orders")).containsExactly(List.of("0"));
    }

    private List<List<String>> query(String sql)
            throws SQLException
    {
        return schema.query(sql);
    }
}
