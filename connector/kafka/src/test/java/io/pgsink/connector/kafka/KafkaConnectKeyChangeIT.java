package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * Issue #28, item 9: primary-key changes through a real Kafka Connect worker (a process of its own,
 * the plugin installed from the archive the build makes), {@code tasks.max=2} over topics of
 * {@value #PARTITIONS} partitions, partitioned by key as Debezium's records are: the delete of a
 * key change and its create travel on different partitions, often to different tasks. Half the
 * moved rows keep their TOASTed body unchanged (the create carries Debezium's placeholder), half
 * are sent whole; some rows move twice, some change just before they move, some after. The target
 * must equal the source's final state within {@value #BOUND_SECONDS} s, where holding each delete
 * for its create ({@code key.change.wait.ms}, 30 s) took 30 s per key change and partition
 * ({@value #MOVES} key changes here); and again when the worker is killed (SIGKILL) while the key
 * changes stream in.
 */
@TestInstance(PER_CLASS)
class KafkaConnectKeyChangeIT
{
    static {
        System.setProperty("org.slf4j.simpleLogger.log.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.state.change.logger", "warn");
    }

    private static final int PARTITIONS = 3;
    private static final int ROWS = 600;
    /** Every other row moves. */
    private static final int MOVES = ROWS / 2;
    private static final long BOUND_SECONDS = 180;
    // generous: only a stuck run waits this long, and a machine shared with other builds can be 10x slower than an idle
    // one
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final List<Field> DOC = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("title", 1, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("body", 2, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("version", 3, Schema.OPTIONAL_INT64_SCHEMA));

    private ConnectWorkerProcesses workers;
    private EmbeddedKafkaCluster kafka;
    private TestingSchema schema;
    private int workerCount;
    private int port;

    @BeforeAll
    void start()
            throws Exception
    {
        schema = TestingPostgreSqlServer.get().createSchema("kafka_moves");
        workers = ConnectWorkerProcesses.withOwnKafka("pgsink-moves");
        kafka = workers.kafka();
        port = startWorker();
    }

    @AfterAll
    void stop()
            throws Exception
    {
        if (workers != null) {
            // and their Kafka
            workers.close();
        }
        if (schema != null) {
            schema.close();
        }
    }

    private int startWorker()
            throws IOException
    {
        workerCount++;
        return workers.start("worker-" + workerCount, ConnectWorkerProcesses.failoverSettings(), List.of("-Xmx512m"),
                await("worker " + workerCount + " to answer"));
    }

    /** Catch-up times, with and without key changes, are printed for the record; the bound is the test. */
    @Test
    void keyChangesAcrossPartitionsAndTasksNeverStallTheSink()
            throws Exception
    {
        DebeziumTopic docs = new DebeziumTopic("moves", "public", "docs", List.of("id"), DOC).asynchronous();
        Map<Long, List<String>> expected = new TreeMap<>();
        start(docs, "moves");

        long inserted = timed(docs, expected, producer -> insertAll(producer, docs, expected));
        long updated = timed(docs, expected, producer -> updateAll(producer, docs, expected));
        long moved = timed(docs, expected, producer -> moveHalf(producer, docs, expected));

        System.out.printf("KafkaConnectKeyChangeIT: %d rows inserted in %d ms; %d rows updated (no key change) in %d "
                + "ms; %d key changes (with changes before and after) in %d ms%n",
                ROWS, inserted, ROWS, updated, MOVES, moved);
        assertThat(moved).as("catch-up time of %d key changes over %d partitions and 2 tasks, ms", MOVES,
                PARTITIONS).isLessThan(BOUND_SECONDS * 1000);
        awaitPositions(docs, "moves");
    }

    /**
     * A worker killed (SIGKILL) while key changes stream in: the new worker's tasks finish them, nothing lost or
     * doubled.
     */
    @Test
    void keyChangesSurviveAKilledWorker()
            throws Exception
    {
        DebeziumTopic docs = new DebeziumTopic("crash", "public", "docs_crash", List.of("id"), DOC).asynchronous();
        Map<Long, List<String>> expected = new TreeMap<>();
        start(docs, "moves-crash");
        timed(docs, expected, producer -> insertAll(producer, docs, expected));

        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producing = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> producer = kafka.createProducer(Map.of())) {
                moveHalf(producer, docs, expected);
                docs.flush(producer);
            }
            catch (Throwable e) {
                producerFailure.set(e);
            }
        }, "key-change-producer");
        producing.start();
        // kill the worker once some key changes are applied, in the middle of whatever it does
        await("some key changes applied").pollInterval(Duration.ofMillis(20))
                .untilAsserted(()
                -> assertThat(count("SELECT count(*) FROM docs_crash WHERE id >= "
                + "100000")).isGreaterThanOrEqualTo(MOVES / 6));
        workers.killLast();
        port = startWorker();
        workers.awaitRunning(port, "moves-crash", 2, await("the connector and its 2 tasks to run again"));
        producing.join(TIMEOUT.toMillis());
        assertThat(producerFailure.get()).isNull();

        awaitEqual("docs_crash", expected);
        awaitPositions(docs, "moves-crash");
    }

    private void start(DebeziumTopic docs, String connector)
            throws Exception
    {
        String table = docs.topic().substring(docs.topic().lastIndexOf('.') + 1);
        schema.execute("CREATE TABLE " + table + " (id bigint PRIMARY KEY, title text, body text, version bigint)");
        kafka.createTopic(docs.topic(), PARTITIONS);
        Map<String, String> config = ConnectWorkerProcesses.jsonConnector(schema, docs.topic());
        config.put("flush.max.events", "500");
        config.put("flush.interval.ms", "200");
        workers.createConnector(port, connector, config);
        workers.awaitRunning(port, connector, 2, await("the connector and its 2 tasks to run"));
    }

    /**
     * Produces what {@code workload} writes, then returns how long the target took to equal the source after the last
     * record was written, in ms.
     */
    private long timed(DebeziumTopic docs, Map<Long, List<String>> expected, Workload workload)
            throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = kafka.createProducer(Map.of())) {
            workload.write(producer);
            docs.flush(producer);
        }
        long start = System.nanoTime();
        awaitEqual(docs.topic().substring(docs.topic().lastIndexOf('.') + 1), expected);
        return (System.nanoTime() - start) / 1_000_000;
    }

    private interface Workload
    {
        void write(KafkaProducer<byte[], byte[]> producer)
                throws Exception;
    }

    private static int partition(long id)
    {
        return (int) (id % PARTITIONS);
    }

    private static String body(long id, String kind)
    {
        // several kB: TOASTed at the source, so a change that leaves it alone does not send it
        return (kind + " body of doc " + id + " ").repeat(150);
    }

    private static void insertAll(KafkaProducer<byte[], byte[]> producer, DebeziumTopic docs, Map<Long,
            List<String>> expected)
    {
        for (long id = 0; id < ROWS; id++) {
            put(producer, docs, expected, "c", id, "doc " + id, body(id, "first"), 1);
        }
    }

    private static void updateAll(KafkaProducer<byte[], byte[]> producer, DebeziumTopic docs, Map<Long,
            List<String>> expected)
    {
        for (long id = 0; id < ROWS; id++) {
            put(producer, docs, expected, "u", id, "doc " + id + " v2", body(id, "first"), 2);
        }
    }

    /**
     * Every other row changes its key (to one on another partition), as Debezium writes it: the
     * delete of the old key with its tombstone, then the create of the new key, which carries
     * the placeholder for the unchanged body of every fourth row (the others are sent whole).
     * Before its key change, every eighth row has its body changed; every sixteenth moves
     * twice; some change again after the move, their body unchanged.
     */
    private static void moveHalf(KafkaProducer<byte[], byte[]> producer, DebeziumTopic docs, Map<Long,
            List<String>> expected)
    {
        for (long id = 0; id < ROWS; id += 2) {
            boolean toasted = id % 4 == 0;
            if (id % 8 == 0) {
                put(producer, docs, expected, "u", id, "doc " + id + " v3", body(id, "changed"), 3);
            }
            long newId = id + 100_001;
            move(producer, docs, expected, id, newId, toasted);
            if (id % 16 == 0) {
                move(producer, docs, expected, newId, newId + 100_001, true);
                newId += 100_001;
            }
            if (id % 6 == 0) {
                List<String> row = expected.get(newId);
                long version = Long.parseLong(row.get(3)) + 1;
                docs.update(producer, partition(newId), null, docs.row("id", newId, "title", "doc " + id
                        + " after its move", "body", UnavailablePlaceholder.DEFAULT, "version", version));
                expected.put(newId, List.of(String.valueOf(newId), "doc " + id + " after its move", row.get(2),
                        String.valueOf(version)));
            }
        }
    }

    private static void move(KafkaProducer<byte[], byte[]> producer, DebeziumTopic docs, Map<Long,
            List<String>> expected, long id, long newId, boolean toasted)
    {
        List<String> old = expected.remove(id);
        long version = Long.parseLong(old.get(3)) + 1;
        docs.keyChangeDelete(producer, partition(id), docs.row("id", id), docs.row("id", newId), true);
        String title = "moved from " + id;
        docs.keyChangeCreate(producer, partition(newId), docs.row("id", newId, "title", title, "body", toasted
                ? UnavailablePlaceholder.DEFAULT : old.get(2), "version", version),
                docs.row("id", id));
        expected.put(newId, List.of(String.valueOf(newId), title, old.get(2), String.valueOf(version)));
    }

    private static void put(KafkaProducer<byte[], byte[]> producer, DebeziumTopic docs, Map<Long,
            List<String>> expected, String op, long id, String title, String body, long version)
    {
        if (op.equals("c")) {
            docs.insert(producer, partition(id), docs.row("id", id, "title", title, "body", body, "version", version));
        }
        else {
            docs.update(producer, partition(id), null, docs.row("id", id, "title", title, "body", body, "version",
                    version));
        }
        expected.put(id, List.of(String.valueOf(id), title, body, String.valueOf(version)));
    }

    /** Polls the target until it equals {@code expected}: first cheaply (count and version sum), then every row. */
    private void awaitEqual(String table, Map<Long, List<String>> expected)
    {
        long rows;
        long versions;
        synchronized (expected) {
            rows = expected.size();
            versions = expected.values().stream().mapToLong(row -> Long.parseLong(row.get(3))).sum();
        }
        String summary = rows + "," + versions;
        await(table + " to hold " + rows + " rows").pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
            List<String> row = schema.query("SELECT count(*), coalesce(sum(version), 0) FROM " + table).get(0);
            assertThat(row.get(0) + "," + row.get(1)).isEqualTo(summary);
        });
        List<List<String>> all = new ArrayList<>(expected.values());
        await(table + " to equal the source").untilAsserted(()
                -> assertThat(schema.query("SELECT id, title, body, version FROM " + table
                + " ORDER BY id")).isEqualTo(all));
    }

    private void awaitPositions(DebeziumTopic docs, String connector)
    {
        List<List<String>> positions = new ArrayList<>();
        new TreeMap<>(docs.lastOffsets()).forEach((partition, offset) -> positions.add(List.of(docs.topic() + "-"
                + partition, String.valueOf(offset))));
        String sql = "SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = '" + connector
                + "' ORDER BY 1";
        await(sql).untilAsserted(() -> assertThat(schema.query(sql)).isEqualTo(positions));
    }

    private static ConditionFactory await(String what)
    {
        return Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(250));
    }

    private long count(String sql)
            throws SQLException
    {
        return Long.parseLong(schema.query(sql).get(0).get(0));
    }
}
