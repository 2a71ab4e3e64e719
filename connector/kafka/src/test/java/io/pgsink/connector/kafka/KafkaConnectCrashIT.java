package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
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
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * Exactly-once across crashes: the connector, installed from the plugin archive the build makes
 * ({@code target/pgsink-kafka-connect-*.zip}) into a Kafka Connect worker running as a process of
 * its own, is killed with SIGKILL twice while changes stream in (mid-flush, with Kafka's committed
 * offsets behind the target), and a new worker takes over each time. At the end the target holds
 * every change exactly once: an append-only ledger (where a replayed record would be a duplicate
 * row) has each entry once, and a keyed table equals the source's final state.
 */
@TestInstance(PER_CLASS)
class KafkaConnectCrashIT
{
    static {
        System.setProperty("org.slf4j.simpleLogger.log.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.state.change.logger", "warn");
    }

    private static final String CONNECTOR = "crash";
    private static final int PARTITIONS = 3;
    private static final int CHANGES = 4000;
    // generous: only a stuck run waits this long, and a machine shared with other builds can be 10x slower than an idle one
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final List<Field> ACCOUNT = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("balance", 1, Schema.OPTIONAL_INT64_SCHEMA),
            new Field("version", 2, Schema.OPTIONAL_INT64_SCHEMA));
    private static final List<Field> LEDGER = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("account", 1, Schema.OPTIONAL_INT64_SCHEMA),
            new Field("amount", 2, Schema.OPTIONAL_INT64_SCHEMA));

    private ConnectWorkerProcesses workers;
    private EmbeddedKafkaCluster kafka;
    private TestingSchema schema;

    @BeforeAll
    void start()
            throws Exception
    {
        schema = TestingPostgreSqlServer.target().createSchema("kafka_crash");
        schema.execute("CREATE TABLE accounts (id bigint PRIMARY KEY, balance bigint, version bigint)", "CREATE TABLE ledger (id bigint NOT NULL, account bigint, amount bigint)");
        // the subclass's own group: its workers' properties and logs in target/ are named after it, apart from
        // this class's, which may run at the same time in another test JVM (pgsink.it.forks)
        workers = ConnectWorkerProcesses.withOwnKafka(getClass() == KafkaConnectCrashIT.class ? "pgsink-crash"
                : "pgsink-crash-" + getClass().getSimpleName().toLowerCase(Locale.ROOT));
        kafka = workers.kafka();
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

    private int startWorker(int number)
            throws IOException
    {
        return workers.start("worker-" + number, ConnectWorkerProcesses.failoverSettings(), List.of("-Xmx512m"),
                await("worker " + number + " to answer"));
    }

    @Test
    void noLossAndNoDuplicatesAcrossKilledWorkers()
            throws Exception
    {
        DebeziumTopic accounts = new DebeziumTopic("crash", "public", "accounts", List.of("id"), ACCOUNT);
        DebeziumTopic ledger = new DebeziumTopic("crash", "public", "ledger", List.of(), LEDGER);
        kafka.createTopic(accounts.topic(), PARTITIONS);
        kafka.createTopic(ledger.topic(), PARTITIONS);

        int port = startWorker(1);
        createConnector(port, accounts.topic() + "," + ledger.topic());
        awaitRunning(port);

        Map<Long, List<String>> expected = new TreeMap<>();
        AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        Thread producer = new Thread(() -> {
            try (KafkaProducer<byte[], byte[]> kafkaProducer = kafka.createProducer(Map.of())) {
                writeChanges(kafkaProducer, accounts, ledger, expected);
            }
            catch (Throwable e) {
                producerFailure.set(e);
            }
        }, "crash-test-producer");
        producer.start();

        boolean targetAheadOfKafka = false;
        for (int kill = 1; kill <= 2; kill++) {
            // let the worker apply changes for a while, then kill it in the middle of whatever it does
            awaitLedgerRows(kill * CHANGES / 4);
            workers.killLast();
            targetAheadOfKafka |= targetAheadOfKafka();
            port = startWorker(kill + 1);
            awaitRunning(port);
        }
        producer.join(TIMEOUT.toMillis());
        assertThat(producerFailure.get()).isNull();
        assertThat(producer.isAlive()).isFalse();

        awaitQuery("SELECT count(*) FROM ledger", List.of(List.of(String.valueOf(CHANGES))));
        List<List<String>> accountRows = new ArrayList<>(expected.values());
        awaitQuery("SELECT id, balance, version FROM accounts ORDER BY id", accountRows);
        // every ledger entry exactly once
        assertThat(query("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM ledger")).containsExactly(List.of(String.valueOf(CHANGES), String.valueOf(CHANGES), "0", String.valueOf(CHANGES - 1)));
        // the kills left Kafka's committed offsets behind the target at least once, so resuming from Kafka's would have duplicated ledger rows
        assertThat(targetAheadOfKafka).as("the target was ahead of Kafka's committed offsets when a worker was killed").isTrue();
        Map<String, String> positions = new TreeMap<>();
        accounts.lastOffsets().forEach((partition, offset) -> positions.put(accounts.topic() + "-" + partition, String.valueOf(offset)));
        ledger.lastOffsets().forEach((partition, offset) -> positions.put(ledger.topic() + "-" + partition, String.valueOf(offset)));
        List<List<String>> positionRows = new ArrayList<>();
        positions.forEach((partition, offset) -> positionRows.add(List.of(partition, offset)));
        awaitQuery("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = '" + CONNECTOR + "' ORDER BY 1", positionRows);
    }

    /**
     * A ledger entry per change, into one of the accounts, whose balance and version it changes;
     * now and then an account is closed (deleted) or a new one opened.
     */
    private static void writeChanges(KafkaProducer<byte[], byte[]> producer, DebeziumTopic accounts, DebeziumTopic ledger, Map<Long, List<String>> expected)
    {
        Random random = new Random(7);
        Map<Long, long[]> state = new HashMap<>();
        for (long id = 0; id < CHANGES; id++) {
            long account = random.nextInt(200);
            long amount = random.nextInt(2_000) - 1_000;
            ledger.insert(producer, (int) (id % PARTITIONS), ledger.row("id", id, "account", account, "amount", amount));
            int partition = (int) (account % PARTITIONS);
            long[] current = state.get(account);
            if (current != null && random.nextInt(20) == 0) {
                accounts.delete(producer, partition, accounts.row("id", account));
                state.remove(account);
            }
            else if (current == null) {
                long[] created = {amount, 1};
                accounts.insert(producer, partition, accounts.row("id", account, "balance", created[0], "version", created[1]));
                state.put(account, created);
            }
            else {
                current[0] += amount;
                current[1]++;
                accounts.update(producer, partition, null, accounts.row("id", account, "balance", current[0], "version", current[1]));
            }
        }
        synchronized (expected) {
            state.forEach((account, values) -> expected.put(account, List.of(String.valueOf(account), String.valueOf(values[0]), String.valueOf(values[1]))));
        }
    }

    /** Whether, for some partition, the target stores a later position than Kafka's committed offset for the connector's consumer group. */
    private boolean targetAheadOfKafka()
            throws Exception
    {
        Map<TopicPartition, OffsetAndMetadata> committed;
        try (Admin admin = kafka.createAdminClient()) {
            committed = admin.listConsumerGroupOffsets("connect-" + CONNECTOR).partitionsToOffsetAndMetadata().get();
        }
        for (List<String> row : query("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = '" + CONNECTOR + "'")) {
            TopicPartition partition = KafkaPositions.parsePartition(row.get(0)).orElseThrow();
            OffsetAndMetadata kafkaOffset = committed.get(partition);
            if (kafkaOffset == null || kafkaOffset.offset() < Long.parseLong(row.get(1)) + 1) {
                return true;
            }
        }
        return false;
    }

    private void createConnector(int port, String topics)
            throws Exception
    {
        Map<String, String> config = ConnectWorkerProcesses.jsonConnector(schema, topics);
        config.put("tables.without.key", "append-only");
        config.put("flush.max.events", "50");
        config.put("flush.interval.ms", "100");
        config.putAll(extraProperties());
        workers.createConnector(port, CONNECTOR, config);
    }

    /** Settings a subclass adds to the connector's configuration, e.g. {@code flush.pipelined}. */
    protected Map<String, String> extraProperties()
    {
        return Map.of();
    }

    private void awaitRunning(int port)
    {
        workers.awaitRunning(port, CONNECTOR, 2, await("the connector and its 2 tasks to run"));
    }

    private static ConditionFactory await(String what)
    {
        return Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(250));
    }

    private void awaitLedgerRows(long atLeast)
    {
        await("at least " + atLeast + " ledger rows").pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> assertThat(Long.parseLong(query("SELECT count(*) FROM ledger").get(0).get(0))).isGreaterThanOrEqualTo(atLeast));
    }

    private void awaitQuery(String sql, List<List<String>> expected)
    {
        await(sql).untilAsserted(() -> assertThat(query(sql)).as(sql).isEqualTo(expected));
    }

    private List<List<String>> query(String sql)
            throws SQLException
    {
        return schema.query(sql);
    }
}
