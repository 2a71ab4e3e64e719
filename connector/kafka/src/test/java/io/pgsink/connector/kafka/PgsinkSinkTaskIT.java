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

import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

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
        schema = TestingPostgreSqlServer.target().createSchema("kafka_task");
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
        schema.execute("DROP TABLE IF EXISTS orders, events, pgsink_offsets, pgsink_dead_letters, pgsink_moved_rows",
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
        Map<String, String> properties = TestingConnector.properties(schema, TOPIC);
        properties.put("name", "orders-sink");
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
     * The delete of a key change is applied at once, whichever task its create reaches: its flush
     * saves the old row in pgsink_moved_rows, and the create, whose unchanged values Debezium did
     * not send, takes them from there in another task. A create that comes before its delete
     * was applied waits, its partition alone paused, until the delete's flush saved the old row.
     * A create whose delete is in the same buffer is filled from the old row by the flush.
     */
    @Test
    void keyChangesNeverHoldTheDeleteAndTheCreateTakesTheOldRowInWhicheverTask()
            throws SQLException
    {
        schema.execute("INSERT INTO orders VALUES (1, 'shipped'), (3, 'paid'), (5, 'new'), (8, 'old')");
        TopicPartition p2 = new TopicPartition(TOPIC, 2);
        TestingSinkTaskContext deletes = new TestingSinkTaskContext(properties(Map.of()), null);
        TestingSinkTaskContext creates = new TestingSinkTaskContext(properties(Map.of()), null);
        PgsinkSinkTask deleting = start(deletes);
        PgsinkSinkTask creating = start(creates);
        deleting.open(List.of(P1));
        creating.open(List.of(P0, p2));

        // the delete first: applied at once, with its tombstone, and its old row saved
        deleting.put(List.of(keyChange("d", 1, 2, P1, 0), keyChangeTombstone(1, 2, P1, 1)));
        assertThat(deleting.preCommit(Map.of(P1, new OffsetAndMetadata(2)))).isEqualTo(Map.of(P1,
                new OffsetAndMetadata(2)));
        assertThat(query("SELECT count(*) FROM orders WHERE id = 1")).containsExactly(List.of("0"));
        assertThat(query("SELECT count(*) FROM pgsink_moved_rows")).containsExactly(List.of("1"));
        // its create, in another task, takes the old row's values, and the saved row is gone with its flush
        creating.put(List.of(keyChange("c", 2, 1, P0, 0)));
        assertThat(creating.preCommit(Map.of(P0, new OffsetAndMetadata(1)))).isEqualTo(Map.of(P0,
                new OffsetAndMetadata(1)));
        assertThat(query("SELECT id, status FROM orders WHERE id IN (1, 2)")).containsExactly(List.of("2", "shipped"));
        assertThat(query("SELECT count(*) FROM pgsink_moved_rows")).containsExactly(List.of("0"));

        // the create first: its partition waits (its records kept, not taken), the task's other partition goes on
        creating.put(List.of(keyChange("c", 4, 3, P0, 1), order("c", 9, "new", P0, 2), order("c", 6, "new", p2, 0)));
        assertThat(creates.paused).isEmpty();
        assertThat(creates.rewinds).doesNotContainKey(P0);
        assertThat(creating.preCommit(Map.of(P0, new OffsetAndMetadata(3), p2, new OffsetAndMetadata(1))))
                .isEqualTo(Map.of(P0, new OffsetAndMetadata(1), p2, new OffsetAndMetadata(1)));
        assertThat(query("SELECT id FROM orders WHERE id IN (4, 6, 9) ORDER BY id")).containsExactly(List.of("6"));
        assertThat(creates.timeout).as("a call to look again").isBetween(1L, 1_000L);
        // a change of the old key before its delete, in the delete's buffer: flushed first, so the saved row has it
        deleting.put(List.of(order("u", 3, "changed", P1, 2), keyChange("d", 3, 4, P1, 3)));
        deleting.preCommit(Map.of(P1, new OffsetAndMetadata(4)));
        Awaitility.await("the waiting create to find its old row").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(60)).untilAsserted(() -> {
                    // a record Connect hands again after a retriable failure is taken once
                    creating.put(List.of(order("c", 9, "new", P0, 2)));
                    assertThat(creating.preCommit(Map.of(P0, new OffsetAndMetadata(3))))
                            .isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
                });
        assertThat(query("SELECT id, status FROM orders WHERE id IN (3, 4, 9) ORDER BY "
                + "id")).containsExactly(List.of("4", "changed"), List.of("9", "new"));

        // delete and create in one buffer: the flush fills the create from the old row, nothing is saved
        deleting.put(List.of(keyChange("d", 5, 7, P1, 4), keyChange("c", 7, 5, P1, 5)));
        deleting.preCommit(Map.of(P1, new OffsetAndMetadata(6)));
        assertThat(query("SELECT id, status FROM orders WHERE id IN (5, 7)")).containsExactly(List.of("7", "new"));
        // a create with every value never waits
        creating.put(List.of(order("c", 10, "sent", P0, 3)));
        SinkRecord moved = order("c", 11, "whole", P0, 4);
        moved.headers().add(KeyChangeHeaders.OLD_KEY, orders.key(8L), KEY);
        creating.put(List.of(moved));
        assertThat(creates.paused).isEmpty();
        assertThat(creating.preCommit(Map.of(P0, new OffsetAndMetadata(5)))).isEqualTo(Map.of(P0,
                new OffsetAndMetadata(5)));
        assertThat(query("SELECT id, status FROM orders WHERE id IN (10, 11) ORDER BY "
                + "id")).containsExactly(List.of("10", "sent"), List.of("11", "whole"));
        assertThat(query("SELECT count(*) FROM pgsink_moved_rows")).containsExactly(List.of("0"));
    }

    /** The tombstone Debezium writes after the delete of a key change, with the delete's header. */
    private SinkRecord keyChangeTombstone(long id, long newId, TopicPartition partition, long offset)
    {
        SinkRecord record = new SinkRecord(partition.topic(), partition.partition(), KEY, orders.key(id), null, null, offset);
        record.headers().add(KeyChangeHeaders.NEW_KEY, orders.key(newId), KEY);
        return record;
    }

    /**
     * A create whose old row is not saved within key.change.wait.ms is applied filled from the old
     * key's row in the target when there is one; without one, it fails saying why.
     */
    @Test
    void aCreateWhoseOldRowDoesNotComeInTimeIsFilledFromTheTargetOrSaysWhy()
            throws SQLException
    {
        schema.execute("INSERT INTO orders VALUES (1, 'shipped')");
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("key.change.wait.ms", "200")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0, P1));
        task.put(List.of(keyChange("c", 2, 1, P1, 0)));
        assertThat(task.preCommit(Map.of(P1, new OffsetAndMetadata(1)))).isEmpty();
        Awaitility.await("the wait to pass").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> {
                    task.put(List.of());
                    assertThat(task.preCommit(Map.of(P1, new OffsetAndMetadata(1))))
                            .isEqualTo(Map.of(P1, new OffsetAndMetadata(1)));
                });
        assertThat(query("SELECT id, status FROM orders ORDER BY id"))
                .containsExactly(List.of("1", "shipped"), List.of("2", "shipped"));

        task.put(List.of(keyChange("c", 4, 3, P1, 1)));
        AtomicReference<ConnectException> failure = new AtomicReference<>();
        Awaitility.await("the wait to pass").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                .until(() -> {
            try {
                task.put(List.of());
                task.preCommit(Map.of(P1, new OffsetAndMetadata(2)));
                return false;
            }
            catch (ConnectException e) {
                failure.set(e);
                return true;
            }
        });
        assertThat(failure.get()).hasMessageContaining("Cannot apply changes to \"" + schema.name() + "\".\"orders\": "
                + "the source did not send unchanged TOAST values of the new rows of primary-key changes, and the "
                + "target no longer has the old rows to take them from: key (4) column(s) [status] moved from key (3).");
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

    /**
     * flush.pipelined: a put hands a full batch to the applier thread and returns; preCommit reports
     * only offsets whose batch committed, never ahead of the target; a batch that fails in flight
     * (its connection killed) surfaces at a later call and is applied again before anything newer,
     * so nothing is lost or applied twice.
     */
    @Test
    void pipelinedOffsetsFollowAppliedBatchesAndABatchFailedInFlightIsAppliedAgainFirst()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "10", "flush.pipelined", "true")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        task.put(events(0, 10, P0, 0));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(10)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(10)));
        assertThat(query("SELECT count(*) FROM events")).containsExactly(List.of("10"));

        task.put(events(10, 5, P0, 10));
        // the target drops the task's connection: the batch handed off next fails on the applier thread
        assertThat(query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + applicationName() + "'")).containsExactly(List.of("1"));
        putAsConnectDoes(task, events(15, 10, P0, 15));
        // wherever the failure surfaced (this put, or the flush of preCommit), the offsets never run ahead of the target
        OffsetAndMetadata reported = task.preCommit(Map.of(P0, new OffsetAndMetadata(25))).get(P0);
        long applied = Long.parseLong(query("SELECT coalesce(max(id), -1) FROM events").get(0).get(0));
        assertThat(reported.offset()).isBetween(10L, applied + 1);

        putAsConnectDoes(task, events(25, 5, P0, 25));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(30)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(30)));
        // an append-only table shows any duplicate
        assertThat(query("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")).containsExactly(List.of("30", "30", "0", "29"));
    }

    /** Hands {@code records} to the task, and again after a retriable failure, as Connect does. */
    private static void putAsConnectDoes(PgsinkSinkTask task, List<SinkRecord> records)
    {
        for (int attempt = 1; ; attempt++) {
            try {
                task.put(records);
                return;
            }
            catch (RetriableException e) {
                if (attempt == 5) {
                    throw e;
                }
            }
        }
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
     * flush.pipelined: closing a partition first lets the batch in flight commit; then, with records
     * of it still buffered, the buffer is dropped and the partitions still owned are rewound to the
     * record after the committed batch.
     */
    @Test
    void pipelinedClosingPartitionsLetsTheBatchInFlightCommitThenDropsTheBuffer()
            throws SQLException
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("flush.max.events", "4", "flush.pipelined", "true")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0, P1));
        // a full batch (P0 at 0 to 1, P1 at 0 to 1) is handed off; the next records are buffered
        task.put(List.of(event(0, P0, 0), event(1, P0, 1), event(100, P1, 0), event(101, P1, 1)));
        task.put(List.of(event(2, P0, 2), event(102, P1, 2)));

        task.close(List.of(P1));
        assertThat(query("SELECT count(*) FROM events")).as("the batch in flight committed").containsExactly(List.of("4"));
        assertThat(context.rewinds).isEqualTo(Map.of(P0, 2L));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(3)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(2)));
        task.put(List.of(event(2, P0, 2)));
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(3)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
        assertThat(query("SELECT count(*), count(DISTINCT id) FROM events")).containsExactly(List.of("5", "5"));
        assertThat(query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'orders-sink' ORDER BY 1")).containsExactly(List.of(TOPIC + "-0", "2"), List.of(TOPIC + "-1", "1"));
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

    /**
     * A column added with a default: a constant the records carry (42) becomes the target default, so
     * existing rows hold it as on the source; one that may be Debezium's stand-in for a function
     * default (the epoch for {@code now()}) is never written, and since rows of the table exist, the
     * task fails naming table and column.
     */
    @Test
    void aDefaultTheRecordsCannotKnowIsNeverWritten()
            throws SQLException
    {
        Schema withDefaults = SchemaBuilder.struct().name("srv.public.orders.Value")
                .field("id", Schema.INT64_SCHEMA)
                .field("status", Schema.OPTIONAL_STRING_SCHEMA)
                .field("n", SchemaBuilder.int32().optional().defaultValue(42).parameter("__debezium.source.column.type", "INT4").build())
                .build();
        Schema withStandIn = SchemaBuilder.struct().name("srv.public.orders.Value")
                .field("id", Schema.INT64_SCHEMA)
                .field("status", Schema.OPTIONAL_STRING_SCHEMA)
                .field("n", SchemaBuilder.int32().optional().defaultValue(42).parameter("__debezium.source.column.type", "INT4").build())
                .field("created", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").optional().defaultValue("1970-01-01T00:00:00Z")
                        .parameter("__debezium.source.column.type", "TIMESTAMPTZ").build())
                .build();
        DebeziumEnvelopes evolved = new DebeziumEnvelopes("public", "orders", KEY, withDefaults);
        DebeziumEnvelopes standIn = new DebeziumEnvelopes("public", "orders", KEY, withStandIn);
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("schema.evolution", "add-columns", "flush.max.events", "1")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        task.put(List.of(order("c", 1, "new", P0, 0)));
        task.put(List.of(at(evolved.record("c", evolved.key(2L), null, evolved.row().put("id", 2L).put("status", "two").put("n", 2), 1000), P0, 1)));
        assertThat(query("SELECT id, n FROM orders ORDER BY id")).containsExactly(List.of("1", "42"), List.of("2", "2"));

        assertThatThrownBy(() -> task.put(List.of(at(standIn.record("c", standIn.key(3L), null, standIn.row().put("id", 3L).put("status", "three").put("n", 3), 1000), P0, 2))))
                .isInstanceOf(ConnectException.class)
                .isNotInstanceOf(RetriableException.class)
                .hasMessageContaining("Cannot add column(s) [created (timestamptz)] of \"" + schema.name() + "\".\"orders\" to \"" + schema.name() + "\".\"orders\": the records give them a default"
                        + " that may be the stand-in Debezium sends for a default it cannot evaluate");
        assertThat(query("SELECT attname FROM pg_attribute WHERE attrelid = '" + schema.name() + ".orders'::regclass AND attname = 'created'")).isEmpty();
        assertThat(query("SELECT attname, pg_get_expr(adbin, adrelid) FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum"
                + " WHERE adrelid = '" + schema.name() + ".orders'::regclass")).containsExactly(List.of("n", "42"));
    }

    /** A target table that does not exist, without schema.evolution=add-columns, fails the task (not retried), naming the table and what to do. */
    @Test
    void aMissingTargetTableFailsTheTask()
    {
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("target.table.name.format", schema.name() + ".no_such_${table}", "flush.max.events", "1")), null);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        assertThatThrownBy(() -> task.put(List.of(order("c", 1, "new", P0, 0))))
                .isInstanceOf(ConnectException.class)
                .isNotInstanceOf(RetriableException.class)
                .hasMessageContaining("no_such_orders")
                .hasMessageContaining("schema.evolution");
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

    /**
     * flush.pipelined with Connect's errant-record reporter: the task flushes synchronously, so
     * that refused rows are reported on the task's own thread (Connect's reporter keeps what it
     * reports in structures its worker thread drains without locking).
     */
    @Test
    void refusedRowsAreReportedOnTheTasksThreadEvenWhenPipelined()
            throws SQLException
    {
        TestingSinkTaskContext.RecordingReporter reporter = new TestingSinkTaskContext.RecordingReporter();
        TestingSinkTaskContext context = new TestingSinkTaskContext(properties(Map.of("errors.tolerance", "all", "flush.max.events", "3", "flush.pipelined", "true")), reporter);
        PgsinkSinkTask task = start(context);
        task.open(List.of(P0));
        SinkRecord tooLong = order("c", 7, "far too long", P0, 1);
        // the third record fills the buffer: the put flushes
        task.put(List.of(order("c", 6, "new", P0, 0), tooLong, order("c", 8, "new", P0, 2)));
        // applied before the put returned, as without flush.pipelined
        assertThat(query("SELECT id, status FROM orders ORDER BY id")).containsExactly(List.of("6", "new"), List.of("8", "new"));
        assertThat(reporter.records).containsExactly(tooLong);
        assertThat(reporter.threads).containsExactly(Thread.currentThread());
        assertThat(task.preCommit(Map.of(P0, new OffsetAndMetadata(3)))).isEqualTo(Map.of(P0, new OffsetAndMetadata(3)));
    }

    private long connections()
            throws SQLException
    {
        return Long.parseLong(query("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + applicationName() + "'").get(0).get(0));
    }

    private List<List<String>> query(String sql)
            throws SQLException
    {
        return schema.query(sql);
    }
}
