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
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The sink task driven by hand, as Kafka Connect drives it (open, put, preCommit, close, and put
 * again after a {@link RetriableException}), against a real PostgreSQL. The Kafka side of the
 * same behaviour is {@code KafkaConnectSinkIT}.
 */
@TestInstance(PER_CLASS)
class PgsinkSinkTaskIT
{
    private static final String TOPIC = "srv.public.orders";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);
    private static final Schema KEY = SchemaBuilder.struct().name("srv.public.orders.Key").field("id", Schema.INT64_SCHEMA).build();
    private static final Schema ROW = SchemaBuilder.struct().name("srv.public.orders.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("status", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
    private static final Schema EVENT = SchemaBuilder.struct().name("srv.public.events.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("note", Schema.OPTIONAL_STRING_SCHEMA)
            .build();

    private final DebeziumEnvelopes orders = new DebeziumEnvelopes("public", "orders", KEY, ROW);
    private final DebeziumEnvelopes events = new DebeziumEnvelopes("public", "events", null, EVENT);
    private final List<PgsinkSinkTask> tasks = new ArrayList<>();
    private TestingSchema schema;

    @BeforeAll
    void createSchema()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.get().createSchema("kafka_task");
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
        schema.execute("DROP TABLE IF EXISTS orders, events, pgsink_offsets, pgsink_dead_letters",
                "CREATE TABLE orders (id bigint PRIMARY KEY, status varchar(8))",
                "CREATE TABLE events (id bigint NOT NULL, note text)");
    }

    @AfterEach
    void stopTasks()
            throws SQLException, InterruptedException
    {
        for (PgsinkSinkTask task : tasks) {
            task.stop();
        }
        tasks.clear();
        // nothing left open: the tasks closed their connections (a closed connection's backend exits a moment later)
        Awaitility.await("the tasks' connections to close").atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(connections()).isZero());
    }

    private Map<String, String> properties(Map<String, String> overrides)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("name", "orders-sink");
        properties.put("connector.class", PgsinkSinkConnector.class.getName());
        properties.put("topics", TOPIC);
        properties.put("target.url", schema.server().jdbcUrl());
        schema.server().properties().forEach((key, value) -> properties.put("target." + key, (String) value));
        properties.put("target.table.name.format", schema.name() + ".${table}");
        properties.put("offsets.schema", schema.name());
        properties.put("tables.without.key", "append-only");
        properties.put("flush.interval.ms", "60000");
        properties.put("target.jdbc.ApplicationName", applicationName());
        properties.putAll(overrides);
        return properties;
    }

    private String applicationName()
    {
        return "pgsink-kafka-test " + schema.name();
    }

    private PgsinkSinkTask start(TestingSinkTaskContext context)
    {
        PgsinkSinkTask task = new PgsinkSinkTask();
        task.initialize(context);
        task.start(context.configs());
        tasks.add(task);
        return task;
    }

    private static SinkRecord at(SourceRecord record, TopicPartition partition, long offset)
    {
        return new SinkRecord(partition.topic(), partition.partition(), record.keySchema(), record.key(), record.valueSchema(), record.value(), offset);
    }

    private SinkRecord order(String op, long id, @Nullable String status, TopicPartition partition, long offset)
    {
        Struct row = status == null ? null : orders.row().put("id", id).put("status", status);
        Struct before = op.equals("d") ? orders.row().put("id", id) : null;
        return at(orders.record(op, orders.key(id), before, op.equals("d") ? null : row, 1000), partition, offset);
    }

    private SinkRecord event(long id, TopicPartition partition, long offset)
    {
        return at(events.record("c", null, null, events.row().put("id", id).put("note", "event " + id), 1000), partition, offset);
    }

    private List<SinkRecord> events(long fromId, int count, TopicPartition partition, long fromOffset)
    {
        List<SinkRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            records.add(event(fromId + i, partition, fromOffset + i));
        }
        return records;
    }

    /** A key change as Debezium writes it: the delete of the old key marked with the new one, or the create of the new key marked with the old one. */
    private SinkRecord keyChange(String op, long id, long otherId, TopicPartition partition, long offset)
    {
        SinkRecord record = order(op, id, op.equals("d") ? null : UnavailablePlaceholder.DEFAULT, partition, offset);
        record.headers().add(op.equals("d") ? KeyChangeHeaders.NEW_KEY : KeyChangeHeaders.OLD_KEY, orders.key(otherId), KEY);
        return record;
    }

    /**
     * The create of a key change, whose unchanged values Debezium did not send, takes them from the
     * old key's row, whether its delete came first in the same batch or comes after it, in a later
     * flush (the two travel on the partitions of their keys).
     */
    @Test
    void theCreateOfAKeyChangeTakesUnsentValuesFromTheOldKeysRow()
            throws SQLException
    {
        schema.execute("INSERT INTO orders VALUES (1, 'shipped'), (3, 'paid')");
        PgsinkSinkTask task = start(new TestingSinkTaskContext(properties(Map.of()), null));
        task.open(List.of(P0, P1));
        task.put(List.of(keyChange("d", 1, 2, P1, 0), keyChange("c", 2, 1, P0, 0)));
        task.put(List.of(keyChange("c", 4, 3, P0, 1)));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(2), P1, new OffsetAndMetadata(1)));
        assertThat(query("SELECT id, status FROM orders ORDER BY id")).containsExactly(List.of("2", "shipped"), List.of("3", "paid"), List.of("4", "paid"));
        task.put(List.of(keyChange("d", 3, 4, P1, 1)));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(2), P1, new OffsetAndMetadata(2)));
        assertThat(query("SELECT id, status FROM orders ORDER BY id")).containsExactly(List.of("2", "shipped"), List.of("4", "paid"));
    }

    @Test
    void buffersUntilThePolicyFlushesAndCommitsOnlyAppliedOffsets()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "5")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0, P1));
        assertThat(context.rewinds).isEmpty();

        task.put(List.of(order("c", 1, "new", P0, 0), order("c", 2, "new", P1, 0), order("u", 1, "paid", P0, 1)));
        assertThat(query("SELECT count(*) FROM orders")).containsExactly(List.of("0"));
        // nothing is committed to Kafka that is not in the target
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(2), P1, new OffsetAndMetadata(1)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(2), P1, new OffsetAndMetadata(1)));
        assertThat(query("SELECT id, status FROM orders ORDER BY id")).containsExactly(List.of("1", "paid"), List.of("2", "new"));

        task.put(List.of(order("c", 3, "new", P0, 2), order("c", 4, "new", P0, 3)));
        // Connect hands over a batch when the oldest buffered record is due, for a quiet stream to flush in time
        assertThat(context.timeout).isBetween(1L, 60_000L);
        assertThat(query("SELECT count(*) FROM orders")).containsExactly(List.of("2"));
        task.put(List.of(order("d", 2, null, P1, 1), order("c", 5, "new", P1, 2), order("c", 6, "new", P1, 3)));
        // the fifth event filled the buffer: flushed within put
        assertThat(query("SELECT id FROM orders ORDER BY id")).containsExactly(List.of("1"), List.of("3"), List.of("4"), List.of("5"), List.of("6"));
        assertThat(query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'orders-sink' ORDER BY 1"))
                .containsExactly(List.of(TOPIC + "-0", "3"), List.of(TOPIC + "-1", "3"));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(4), P1, new OffsetAndMetadata(4)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(4), P1, new OffsetAndMetadata(4)));

        // a new task (after a restart, or another task after a rebalance) resumes after the stored positions
        TestingSinkTaskContext next = new TestingSinkTaskContext(context.configs(), null);
        PgsinkSinkTask restarted = start(next);
        restarted.open(List.of(P1));
        assertThat(next.rewinds).isEqualTo(Map.of(P1, 4L));
        assertThat(restarted.preCommit(Map.of(P1, new OffsetAndMetadata(4)))).isEqualTo(Map.of(P1, new OffsetAndMetadata(4)));
    }

    /**
     * The same metadata, soft-delete and history keys as the standalone service: positions are the
     * records' topic partitions and offsets, commit times Debezium's {@code source.ts_ms}.
     */
    @Test
    void metadataColumnsSoftDeletesAndHistory()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of(
                "schema.evolution", "add-columns",
                "metadata.operation.column", "_op",
                "metadata.source.position.column", "_position",
                "metadata.source.timestamp.column", "_committed_at",
                "delete.mode", "soft",
                "delete.flag.column", "_deleted",
                "history.table.include.list", ".*\\.events")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0, P1));
        task.put(List.of(order("c", 1, "new", P0, 0), order("c", 2, "new", P1, 0), order("u", 1, "paid", P0, 1), event(7, P0, 2), event(7, P0, 3)));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(4), P1, new OffsetAndMetadata(1)));
        task.put(List.of(order("d", 2, null, P1, 1), order("d", 1, null, P0, 4)));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(5), P1, new OffsetAndMetadata(2)));
        assertThat(query("SELECT id, status, _op, _position, extract(epoch FROM _committed_at)::int, _deleted FROM orders ORDER BY id")).containsExactly(
                List.of("1", "paid", "d", TOPIC + "-0:4", "1", "t"),
                List.of("2", "new", "d", TOPIC + "-1:1", "1", "t"));
        // inserted again: the marks are cleared
        task.put(List.of(order("c", 2, "again", P1, 2)));
        task.preCommit(Map.of(P1, new OffsetAndMetadata(3)));
        assertThat(query("SELECT id, status, _op, _position, _deleted FROM orders ORDER BY id")).containsExactly(
                List.of("1", "paid", "d", TOPIC + "-0:4", "t"),
                List.of("2", "again", "c", TOPIC + "-1:2", "f"));
        // the history table (without a key) got one row per record, even of the same row twice
        assertThat(query("SELECT id, note, _op, _position FROM events ORDER BY _position")).containsExactly(
                List.of("7", "event 7", "c", TOPIC + "-0:2"),
                List.of("7", "event 7", "c", TOPIC + "-0:3"));
    }

    @Test
    void transientFailureIsRetriedWithTheSameRecordsWithoutLossOrDuplicates()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "10")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        task.put(events(0, 10, P0, 0));
        assertThat(query("SELECT count(*) FROM events")).containsExactly(List.of("10"));

        task.put(events(10, 5, P0, 10));
        // the target drops the task's connection: the next flush fails
        assertThat(query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + applicationName() + "'")).containsExactly(List.of("1"));
        List<SinkRecord> batch = events(15, 10, P0, 15);
        assertThatThrownBy(() -> task.put(batch))
                .isInstanceOf(RetriableException.class)
                .hasMessageStartingWith("orders-sink - ")
                .hasMessageEndingWith("(attempt 1, retrying in 500 ms)");
        assertThat(context.timeout).isEqualTo(500);

        // Connect hands the same batch again: the records buffered before the failure are not taken twice
        task.put(batch);
        task.put(events(25, 5, P0, 25));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(30)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(30)));
        // an append-only table shows any duplicate
        assertThat(query("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")).containsExactly(List.of("30", "30", "0", "29"));
    }

    @Test
    void aBatchThatCommittedDespiteTheLostConnectionIsNotAppliedAgain()
            throws Exception
    {
        // the commit of the batch holding event 13 takes 3 s on the server (a deferred trigger), the
        // client gives up after 1 s: the connection is lost, but the server commits the batch
        schema.execute("CREATE TABLE slept (done boolean)",
                "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                        + "IF NEW.id = 13 AND NOT EXISTS (SELECT 1 FROM " + schema.name() + ".slept) THEN INSERT INTO " + schema.name() + ".slept VALUES (true); PERFORM pg_sleep(3); END IF; RETURN NULL; END $$",
                "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()");
        try {
            TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "10", "target.jdbc.socketTimeout", "1")), null);
            PgsinkSinkTask task = start(context);
            task.open(List.of(P0));
            task.put(events(0, 10, P0, 0));
            // the sink asks the server on a new connection, waits while the transaction is still
            // in progress, finds it committed, and goes on without applying the batch again (on
            // Greenplum, which cannot be asked, the put fails and the retried batch is skipped
            // because the stored positions hold it)
            task.put(events(10, 10, P0, 10));
            assertThat(query("SELECT count(*) FROM events")).containsExactly(List.of("20"));
            assertThat(query("SELECT count(*) FROM slept")).as("the commit was slow").containsExactly(List.of("1"));

            task.put(events(20, 10, P0, 20));
            assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(30)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(30)));
            assertThat(query("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")).containsExactly(List.of("30", "30", "0", "29"));
        }
        finally {
            schema.execute("DROP TRIGGER slow_commit ON events", "DROP FUNCTION slow_commit()", "DROP TABLE slept");
        }
    }

    @Test
    void closingPartitionsWithUnflushedRecordsDropsTheBufferAndRewinds()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "100")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0, P1));
        task.put(events(0, 3, P0, 0));
        task.put(events(100, 3, P1, 0));
        task.preCommit(Map.of(P0, new OffsetAndMetadata(3), P1, new OffsetAndMetadata(3)));
        task.put(events(3, 2, P0, 3));
        task.put(events(103, 2, P1, 3));

        // P1 is lost to another task (no preCommit first): this task must not write its records nor its position
        task.close(List.of(P1));
        assertThat(context.rewinds).isEqualTo(Map.of(P0, 3L));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(5)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
        // Connect reads P0 again from the rewound offset
        task.put(events(3, 2, P0, 3));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(5)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(5)));
        assertThat(query("SELECT count(*), count(DISTINCT id) FROM events WHERE id < 100")).containsExactly(List.of("5", "5"));
        assertThat(query("SELECT count(*) FROM events WHERE id >= 100")).containsExactly(List.of("3"));
        assertThat(query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'orders-sink' ORDER BY 1")).containsExactly(List.of(TOPIC + "-0", "4"), List.of(TOPIC + "-1", "2"));
    }

    /**
     * A task paused long enough (a GC pause) to lose its partition to another task, which claims
     * it on open: the late batch of the first task is not committed, its records and position stay
     * out of the target, and it keeps failing (retriably) until Connect closes the partition.
     */
    @Test
    void aTaskThatLostItsPartitionCannotCommitALateBatch()
            throws SQLException
    {
        TestingSinkTaskContext zombieContext = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "100")), null);
        PgsinkSinkTask zombie = start(zombieContext);
        zombie.open(List.of(P0));
        zombie.put(events(0, 3, P0, 0));

        TestingSinkTaskContext ownerContext = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "100")), null);
        PgsinkSinkTask owner = start(ownerContext);
        owner.open(List.of(P0));
        owner.put(events(0, 2, P0, 0));
        assertThat(owner.preCommit(Map.of(P0, new OffsetAndMetadata(2)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(2)));

        // the late batch: not committed, nor its position
        assertThat(zombie.preCommit(Map.of(P0, new OffsetAndMetadata(3)))).isEmpty();
        assertThatThrownBy(() -> zombie.put(events(3, 1, P0, 3)))
                .isInstanceOf(RetriableException.class)
                .hasMessageContaining("Another writer with sink.name orders-sink took over " + TOPIC + "-0 since this one claimed it (generation 1");
        assertThat(query("SELECT count(*), max(id) FROM events")).containsExactly(List.of("2", "1"));
        assertThat(query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'orders-sink'")).containsExactly(List.of(TOPIC + "-0", "1"));
        assertThat(query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'orders-sink (writer generation)'")).containsExactly(List.of(TOPIC + "-0", "2"));

        // Connect closes the lost partition: the task works on with what it is given
        zombie.close(List.of(P0));
        zombie.open(List.of(P1));
        zombie.put(events(100, 1, P1, 0));
        assertThat(zombie.preCommit(Map.of(P1, new OffsetAndMetadata(1)))).isEqualTo(Map.of(P1, new OffsetAndMetadata(1)));
        assertThat(query("SELECT count(*) FROM events WHERE id = 100")).containsExactly(List.of("1"));
    }

    /** A login the target refuses is not retried: the task fails, saying what to fix. */
    @Test
    void anAccessFailureFailsTheTaskSayingWhatToDo()
    {
        // the user in the URL's query, where the test server's URL may have one, would win over target.user
        String url = schema.server().jdbcUrl().replaceFirst("\\?.*", "");
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("target.url", url, "target.user", "pgsink_no_such_role_" + schema.name())), null);
        PgsinkSinkTask task = start(context);
        assertThatThrownBy(() -> task.open(List.of(P0)))
                .isInstanceOf(ConnectException.class)
                .isNotInstanceOf(RetriableException.class)
                .hasMessageContaining("does not exist [SQLState 28000]. What to do: the server refused the login: check target.user and target.password");
    }

    @Test
    void aRowTheTargetRefusesFailsTheTaskNamingWhereAndWhy()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "3")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        assertThatThrownBy(() -> task.put(List.of(order("c", 6, "new", P0, 0), order("c", 7, "far too long", P0, 1), order("c", 8, "new", P0, 2))))
                .isInstanceOf(ConnectException.class)
                .isNotInstanceOf(RetriableException.class)
                .hasMessage("orders-sink - Cannot write a row of \"" + schema.name() + "\".\"orders\" key (7) column status (from \"" + schema.name() + "\".\"orders\" at offset 1 of srv.public.orders-0): "
                        + "value too long for type character varying(8) [SQLState 22001]")
                .satisfies(e -> {
                    // Connect's worker logs the whole cause chain: sanitized, no value in it
                    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                        assertThat(cause.getMessage()).as("the message of %s", cause.getClass()).doesNotContain("far too long");
                    }
                });
        assertThat(query("SELECT count(*) FROM orders")).containsExactly(List.of("0"));

        // a record that cannot be read at all
        TestingSinkTaskContext second = new TestingSinkTaskContext(properties(Map.of()), null);
        PgsinkSinkTask other = start(second);
        other.open(List.of(P1));
        SinkRecord notAStruct = new SinkRecord(TOPIC, 1, null, null, null, "hello", 7);
        assertThatThrownBy(() -> other.put(List.of(notAStruct)))
                .isInstanceOf(ConnectException.class)
                .hasMessageStartingWith("orders-sink - Record of topic srv.public.orders at offset 7 of srv.public.orders-1 is not a Debezium change event: its value is a java.lang.String");
    }

    @Test
    void toleratedBadRecordsGoToTheErrantRecordReporter()
            throws SQLException
    {
        TestingSinkTaskContext.RecordingReporter reporter = new TestingSinkTaskContext.RecordingReporter();
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("errors.tolerance", "all", "flush.max.events", "100")), reporter);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        SinkRecord tooLong = order("c", 7, "far too long", P0, 1);
        SinkRecord notAStruct = new SinkRecord(TOPIC, 0, null, null, null, "hello", 3);
        task.put(List.of(order("c", 6, "new", P0, 0), tooLong, order("c", 8, "new", P0, 2), notAStruct, order("u", 6, "paid", P0, 4)));
        // the unreadable record is reported at once
        assertThat(reporter.records).containsExactly(notAStruct);
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(5)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(5)));

        assertThat(query("SELECT id, status FROM orders ORDER BY id")).containsExactly(List.of("6", "paid"), List.of("8", "new"));
        // the row the target refused: the record behind it, as Connect received it, with the reason
        assertThat(reporter.records).containsExactly(notAStruct, tooLong);
        assertThat(reporter.errors.get(1)).hasMessageContaining("key (7) column status").hasMessageContaining("at offset 1 of srv.public.orders-0").hasMessageContaining("value too long");
        assertThat(query("SELECT count(*) FROM information_schema.tables WHERE table_schema = '" + schema.name() + "' AND table_name = 'pgsink_dead_letters'")).containsExactly(List.of("0"));
    }

    private long connections()
            throws SQLException
    {
        return Long.parseLong(query("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + applicationName() + "'").get(0).get(0));
    }

    private List<List<String>> query(String sql)
            throws SQLException
    {
        try (Connection connection = schema.connect(); Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            List<List<String>> result = new ArrayList<>();
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    row.add(rows.getString(i));
                }
                result.add(row);
            }
            return result;
        }
    }
}
