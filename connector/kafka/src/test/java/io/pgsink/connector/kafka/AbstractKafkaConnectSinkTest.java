package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.copy.testing.Rows;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorOffset;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import javax.management.AttributeNotFoundException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The connector in a real Kafka Connect worker with a real Kafka broker (KRaft), both in the test
 * JVM ({@link EmbeddedConnectCluster}), fed Debezium-format records (JsonConverter with schemas)
 * produced to topics, writing into PostgreSQL ({@link KafkaConnectSinkIT}) or Greenplum
 * ({@link GreenplumKafkaConnectSinkIT}), with two tasks writing one table in some tests.
 */
@TestInstance(PER_CLASS)
abstract class AbstractKafkaConnectSinkTest
{
    static {
        // the broker and the worker log every setting at INFO
        System.setProperty("org.slf4j.simpleLogger.log.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.state.change.logger", "warn");
    }

    private static final Schema AMOUNT = Decimal.builder(2).parameter("connect.decimal.precision", "12").optional().build();
    private static final Schema MICRO_TIMESTAMP = SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").version(1).optional().build();
    private static final Schema ZONED_TIMESTAMP = SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").version(1).optional().build();
    private static final Schema UUID_TYPE = SchemaBuilder.string().name("io.debezium.data.Uuid").version(1).optional().build();
    private static final Schema JSON = SchemaBuilder.string().name("io.debezium.data.Json").version(1).optional().build();
    private static final List<Field> ORDER_COLUMNS = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("status", 1, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("amount", 2, AMOUNT),
            new Field("placed", 3, MICRO_TIMESTAMP),
            new Field("updated_at", 4, ZONED_TIMESTAMP),
            new Field("ref", 5, UUID_TYPE),
            new Field("doc", 6, JSON),
            new Field("note", 7, Schema.OPTIONAL_STRING_SCHEMA));
    private static final List<Field> DOC_COLUMNS = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("title", 1, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("body", 2, Schema.OPTIONAL_STRING_SCHEMA));
    private static final String DOCS_TABLE = "(id bigint PRIMARY KEY, title text, body text)";
    private static final String ORDERS_TABLE = "(id bigint PRIMARY KEY, status varchar(16), amount numeric(12,2), placed timestamp(6), updated_at timestamptz, ref uuid, doc jsonb, note text)";
    private static final String ORDERS_QUERY = "SELECT id, status, amount::text, (extract(epoch FROM placed) * 1000000)::bigint::text, (extract(epoch FROM updated_at) * 1000000)::bigint::text, "
            + "ref::text, doc::text, note FROM %s ORDER BY id";
    // generous: only a stuck run waits this long, and a machine shared with other builds can be 10x slower than an idle one
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    EmbeddedConnectCluster connect;
    KafkaProducer<byte[], byte[]> producer;
    TestingSchema schema;

    /** The server the connectors write to, in a schema of the class. */
    protected abstract TestingPostgreSqlServer targetServer();

    /** How the connectors read records: JsonConverter with schemas (record.format=connect, the default). */
    protected Map<String, String> recordSettings()
    {
        return Map.of("key.converter", "org.apache.kafka.connect.json.JsonConverter",
                "key.converter.schemas.enable", "true",
                "value.converter", "org.apache.kafka.connect.json.JsonConverter",
                "value.converter.schemas.enable", "true",
                "value.converter.replace.null.with.default", "false");
    }

    /** Whether the records reach the connector as structs, so that Single Message Transforms such as ExtractNewRecordState can run in its worker. */
    protected boolean takesSinkSideTransforms()
    {
        return true;
    }

    @BeforeAll
    void start()
            throws SQLException
    {
        schema = targetServer().createSchema("kafka_connect");
        Map<String, String> workerProperties = new HashMap<>();
        // Connect commits (and calls preCommit) every second
        workerProperties.put("offset.flush.interval.ms", "1000");
        workerProperties.put("plugin.discovery", "service_load");
        // a worker that leaves has its tasks reassigned after this, not the default five minutes
        workerProperties.put("scheduled.rebalance.max.delay.ms", "2000");
        connect = new EmbeddedConnectCluster.Builder()
                .name("pgsink-it")
                .numWorkers(1)
                .numBrokers(1)
                .workerProps(workerProperties)
                .build();
        connect.start();
        producer = connect.kafka().createProducer(Map.of());
    }

    @AfterAll
    void stop()
            throws SQLException
    {
        if (producer != null) {
            producer.close();
        }
        if (connect != null) {
            connect.stop();
        }
        schema.close();
    }

    Map<String, String> connector(String name, String topics, String tableFormat, int tasks)
    {
        Map<String, String> config = TestingConnector.properties(schema, topics);
        config.put("tasks.max", String.valueOf(tasks));
        config.putAll(recordSettings());
        config.put("target.table.name.format", tableFormat);
        config.put("flush.interval.ms", "200");
        config.put("target.jdbc.ApplicationName", applicationName(name));
        return config;
    }

    private String applicationName(String connector)
    {
        return "pgsink-it " + connector + " " + schema.name();
    }

    void startConnector(String name, Map<String, String> config, int tasks)
            throws InterruptedException
    {
        connect.configureConnector(name, config);
        connect.assertions().assertConnectorAndExactlyNumTasksAreRunning(name, tasks, "connector " + name + " did not start");
    }

    /** Debezium envelopes, and the same records flattened by ExtractNewRecordState in both of its delete modes, give the same tables. */
    @Test
    void appliesEnvelopesAndFlattenedRecords()
            throws Exception
    {
        DebeziumTopic orders = new DebeziumTopic("it", "public", "orders", List.of("id"), ORDER_COLUMNS);
        DebeziumTopic lines = new DebeziumTopic("it", "public", "lines", List.of("id"), ORDER_COLUMNS);
        connect.kafka().createTopic(orders.topic(), 2);
        connect.kafka().createTopic(lines.topic(), 1);
        schema.execute("CREATE TABLE orders " + ORDERS_TABLE, "CREATE TABLE orders_rewrite " + ORDERS_TABLE, "CREATE TABLE it_public_orders " + ORDERS_TABLE,
                "CREATE TABLE lines " + ORDERS_TABLE);

        startConnector("envelopes", connector("envelopes", orders.topic() + "," + lines.topic(), schema.name() + ".${table}", 2), 2);
        List<String> connectors = new ArrayList<>(List.of("envelopes"));
        if (takesSinkSideTransforms()) {
            startFlattening(orders);
            connectors.addAll(List.of("flattened-rewrite", "flattened-tombstone"));
        }

        Map<Long, Struct> expected = writeOrders(orders, new Random(42));

        // lines: a truncate empties the table at its place in the stream
        for (long id = 1; id <= 20; id++) {
            lines.insert(producer, 0, order(lines, id, new Random(id)));
        }
        lines.truncate(producer, 0);
        Map<Long, Struct> expectedLines = new TreeMap<>();
        for (long id = 100; id < 110; id++) {
            Struct row = order(lines, id, new Random(id));
            lines.insert(producer, 0, row);
            expectedLines.put(id, row);
        }
        Struct changed = order(lines, 105, new Random(7));
        lines.update(producer, 0, null, changed);
        expectedLines.put(105L, changed);

        List<List<String>> expectedRows = rows(expected);
        awaitRows(ORDERS_QUERY.formatted("orders"), expectedRows);
        if (takesSinkSideTransforms()) {
            awaitRows(ORDERS_QUERY.formatted("orders_rewrite"), expectedRows);
            awaitRows(ORDERS_QUERY.formatted("it_public_orders"), expectedRows);
        }
        awaitRows(ORDERS_QUERY.formatted("lines"), rows(expectedLines));

        // positions: the last record of every partition, tombstones included
        Map<String, String> positions = new TreeMap<>();
        orders.lastOffsets().forEach((partition, offset) -> positions.put(orders.topic() + "-" + partition, String.valueOf(offset)));
        lines.lastOffsets().forEach((partition, offset) -> positions.put(lines.topic() + "-" + partition, String.valueOf(offset)));
        awaitRows("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'envelopes' ORDER BY 1", toRows(positions));
        // and Kafka's committed offsets follow them, never ahead
        awaitCommitted("envelopes", positions);

        for (String name : connectors) {
            connect.deleteConnector(name);
        }
    }

    /** The same records flattened by ExtractNewRecordState in the sink's worker, in both of its delete modes. */
    private void startFlattening(DebeziumTopic orders)
            throws InterruptedException
    {
        Map<String, String> rewrite = connector("flattened-rewrite", orders.topic(), schema.name() + ".${source.table}_rewrite", 1);
        rewrite.put("transforms", "unwrap");
        rewrite.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
        rewrite.put("transforms.unwrap.delete.tombstone.handling.mode", "rewrite");
        rewrite.put("transforms.unwrap.add.fields", "op,source.schema,source.table");
        rewrite.put("transforms.unwrap.replace.null.with.default", "false");
        startConnector("flattened-rewrite", rewrite, 1);
        Map<String, String> tombstone = connector("flattened-tombstone", orders.topic(), schema.name() + ".${topic}", 1);
        tombstone.put("transforms", "unwrap");
        tombstone.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
        tombstone.put("transforms.unwrap.replace.null.with.default", "false");
        startConnector("flattened-tombstone", tombstone, 1);
    }

    /**
     * Writes a random stream of the changes Debezium emits for a table with a primary key and
     * REPLICA IDENTITY DEFAULT, and returns the table's final state.
     */
    private Map<Long, Struct> writeOrders(DebeziumTopic orders, Random random)
    {
        Map<Long, Struct> state = new TreeMap<>();
        long nextId = 1;
        for (; nextId <= 30; nextId++) {
            Struct row = order(orders, nextId, random);
            orders.read(producer, partition(nextId), row);
            state.put(nextId, row);
        }
        for (int i = 0; i < 300; i++) {
            int dice = random.nextInt(100);
            List<Long> ids = new ArrayList<>(state.keySet());
            if (dice < 35 || ids.isEmpty()) {
                long id = nextId++;
                Struct row = order(orders, id, random);
                orders.insert(producer, partition(id), row);
                state.put(id, row);
            }
            else if (dice < 75) {
                long id = ids.get(random.nextInt(ids.size()));
                Struct row = order(orders, id, random);
                if (random.nextBoolean()) {
                    // an unchanged TOASTed value is not sent: Debezium's placeholder stands in for it
                    Struct sent = order(orders, id, new Random(random.nextLong()));
                    copy(row, sent);
                    sent.put("note", UnavailablePlaceholder.DEFAULT);
                    row.put("note", state.get(id).get("note"));
                    orders.update(producer, partition(id), null, sent);
                }
                else {
                    orders.update(producer, partition(id), null, row);
                }
                state.put(id, row);
            }
            else if (dice < 90) {
                long id = ids.get(random.nextInt(ids.size()));
                orders.delete(producer, partition(id), orders.row("id", id));
                state.remove(id);
            }
            else {
                // a primary key change: Debezium sends a delete of the old key (and its tombstone) and a create of the new one
                long id = ids.get(random.nextInt(ids.size()));
                long newId = nextId++;
                Struct row = orders.row();
                copy(state.get(id), row);
                row.put("id", newId);
                orders.delete(producer, partition(id), orders.row("id", id));
                orders.insert(producer, partition(newId), row);
                state.remove(id);
                state.put(newId, row);
            }
        }
        return state;
    }

    private static int partition(long id)
    {
        return (int) (id % 2);
    }

    private static void copy(Struct from, Struct to)
    {
        for (Field field : from.schema().fields()) {
            to.put(field.name(), from.get(field));
        }
    }

    private static Struct order(DebeziumTopic topic, long id, Random random)
    {
        long placedMicros = 1_700_000_000_000_000L + random.nextInt(1_000_000_000) * 1_000L + 1 + random.nextInt(999);
        Instant updated = Instant.ofEpochSecond(1_750_000_000L + random.nextInt(100_000_000), (1 + random.nextInt(999_999)) * 1_000L);
        return topic.row(
                "id", id,
                "status", List.of("new", "paid", "shipped", "returned").get(random.nextInt(4)),
                "amount", new BigDecimal(BigInteger.valueOf(random.nextInt(10_000_000) - 5_000_000), 2),
                "placed", placedMicros,
                "updated_at", updated.toString(),
                "ref", new UUID(random.nextLong(), random.nextLong()).toString(),
                "doc", "{\"n\": " + random.nextInt(1000) + ", \"tags\": [\"a\", \"b\"]}",
                "note", random.nextInt(5) == 0 ? null : "note " + random.nextInt() + " \u00e9\u00e8 \"quoted\", with comma\nand newline");
    }

    /** The rows as {@link #ORDERS_QUERY} prints them. */
    private static List<List<String>> rows(Map<Long, Struct> state)
    {
        List<List<String>> rows = new ArrayList<>();
        for (Struct row : state.values()) {
            Instant updated = Instant.parse(row.getString("updated_at"));
            List<String> values = new ArrayList<>();
            values.add(String.valueOf(row.getInt64("id")));
            values.add(row.getString("status"));
            values.add(((BigDecimal) row.get("amount")).toPlainString());
            values.add(String.valueOf(row.getInt64("placed")));
            values.add(String.valueOf(updated.getEpochSecond() * 1_000_000 + updated.getNano() / 1_000));
            values.add(row.getString("ref"));
            values.add(row.getString("doc"));
            values.add(row.getString("note"));
            rows.add(values);
        }
        return rows;
    }

    private static List<List<String>> toRows(Map<String, String> map)
    {
        List<List<String>> rows = new ArrayList<>();
        map.forEach((key, value) -> rows.add(List.of(key, value)));
        return rows;
    }

    /**
     * Issue #20, item 1: a primary-key change of a row whose TOASTed column is unchanged
     * ({@code REPLICA IDENTITY DEFAULT}: the create carries the placeholder), split across polls
     * and flushes: the delete is produced and applied at once (its old row saved in
     * pgsink_moved_rows), and a flush passes before the create is produced. The create takes the
     * value from the saved old row, with Debezium's tombstones and without, failing on errors or
     * tolerating them.
     */
    @Test
    void aKeyChangeSplitAcrossPollsAndFlushesKeepsTheUnsentToastValues()
            throws Exception
    {
        DebeziumTopic withTombstones = new DebeziumTopic("it", "public", "docs_t", List.of("id"), DOC_COLUMNS);
        DebeziumTopic withoutTombstones = new DebeziumTopic("it", "public", "docs_n", List.of("id"), DOC_COLUMNS);
        DebeziumTopic other = new DebeziumTopic("it", "public", "docs_x", List.of("id"), DOC_COLUMNS);
        List<DebeziumTopic> topics = List.of(withTombstones, withoutTombstones, other);
        for (DebeziumTopic topic : topics) {
            connect.kafka().createTopic(topic.topic(), 1);
        }
        connect.kafka().createTopic("keys-dlq", 1);
        for (String prefix : List.of("", "tolerant_")) {
            for (String table : List.of("docs_t", "docs_n", "docs_x")) {
                schema.execute("CREATE TABLE " + prefix + table + " " + DOCS_TABLE);
            }
        }
        String topicList = withTombstones.topic() + "," + withoutTombstones.topic() + "," + other.topic();
        startConnector("keys", connector("keys", topicList, schema.name() + ".${table}", 1), 1);
        Map<String, String> tolerant = connector("keys-tolerant", topicList, schema.name() + ".tolerant_${table}", 1);
        tolerant.put("errors.tolerance", "all");
        tolerant.put("errors.deadletterqueue.topic.name", "keys-dlq");
        tolerant.put("errors.deadletterqueue.topic.replication.factor", "1");
        startConnector("keys-tolerant", tolerant, 1);

        String body = "a large body, TOASTed at the source ".repeat(100);
        for (DebeziumTopic topic : List.of(withTombstones, withoutTombstones)) {
            for (long id = 1; id <= 3; id++) {
                topic.insert(producer, 0, topic.row("id", id, "title", "doc " + id, "body", body + id));
            }
        }
        for (String table : List.of("docs_t", "docs_n", "tolerant_docs_t", "tolerant_docs_n")) {
            awaitRows("SELECT count(*) FROM " + table, List.of(List.of("3")));
        }

        // the primary key of doc 1 changes to 1001, its body unchanged: first the delete of the old key
        withTombstones.keyChangeDelete(producer, 0, withTombstones.row("id", 1L), withTombstones.row("id", 1001L), true);
        withoutTombstones.keyChangeDelete(producer, 0, withoutTombstones.row("id", 1L), withoutTombstones.row("id", 1001L), false);
        // applied at once, with the old row saved for the create
        for (String table : List.of("docs_t", "docs_n", "tolerant_docs_t", "tolerant_docs_n")) {
            awaitRows("SELECT id FROM " + table + " ORDER BY id", List.of(List.of("2"), List.of("3")));
        }
        // a flush passes before the create comes
        other.insert(producer, 0, other.row("id", 7L, "title", "other", "body", "x"));
        awaitRows("SELECT id FROM docs_x", List.of(List.of("7")));
        awaitRows("SELECT id FROM tolerant_docs_x", List.of(List.of("7")));

        // then the create of the new key, with the placeholder for the unchanged body
        for (DebeziumTopic topic : List.of(withTombstones, withoutTombstones)) {
            topic.keyChangeCreate(producer, 0, topic.row("id", 1001L, "title", "doc 1, renumbered", "body", UnavailablePlaceholder.DEFAULT), topic.row("id", 1L));
        }
        List<List<String>> expected = List.of(List.of("2", "doc 2", body + 2), List.of("3", "doc 3", body + 3), List.of("1001", "doc 1, renumbered", body + 1));
        for (String table : List.of("docs_t", "docs_n", "tolerant_docs_t", "tolerant_docs_n")) {
            awaitRows("SELECT id, title, body FROM " + table + " ORDER BY id", expected);
        }
        Map<String, String> positions = new TreeMap<>();
        for (DebeziumTopic topic : topics) {
            positions.put(topic.topic() + "-0", String.valueOf(topic.lastOffsets().get(0)));
        }
        for (String connector : List.of("keys", "keys-tolerant")) {
            awaitRows("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = '" + connector + "' ORDER BY 1", toRows(positions));
            awaitCommitted(connector, positions);
            assertThat(connect.connectorStatus(connector).tasks().get(0).state()).isEqualTo("RUNNING");
            // the task's meters, as JMX shows them
            assertThat(taskMetric(connector, "key-change-creates-waiting")).isZero();
            assertThat(taskMetric(connector, "events-in-total")).as("6 inserts, 2 deletes, a tombstone, 2 creates and the other insert").isEqualTo(12);
            assertThat(taskMetric(connector, "rows-applied-total")).isGreaterThanOrEqualTo(9);
            assertThat(taskMetric(connector, "flushes-total")).isGreaterThanOrEqualTo(3);
            assertThat(taskMetric(connector, "copy-bytes-total")).isGreaterThan(6L * body.length());
            assertThat(taskMetric(connector, "buffer-bytes")).isZero();
            assertThat(taskMetric(connector, "source-lag-ms")).isBetween(0L, TIMEOUT.toMillis());
            assertThat(taskMetric(connector, "flush-time-max-ms")).isPositive();
            assertThat(taskAttribute(connector, "state")).isEqualTo("RUNNING");
            // as Prometheus reads them through the JMX exporter, under the standalone service's names
            String metrics = PrometheusExport.scrape();
            String task = "sink=\"" + connector + "\",task=\"0\"";
            assertThat(metrics).as("%s", PrometheusExport.CONFIG)
                    .contains("pgsink_events_in_total{" + task + "} 12.0\n", "pgsink_buffer_bytes{" + task + "} 0.0\n",
                            "pgsink_flush_failures_total{" + task + "} 0.0\n",
                            "pgsink_state{sink=\"" + connector + "\",state=\"RUNNING\",task=\"0\"} 1.0\n")
                    .containsPattern("pgsink_rows_applied_total\\{operation=\"upsert\"," + task + "} [1-9]")
                    .containsPattern("pgsink_rows_applied_total\\{operation=\"delete\"," + task + "} [0-9]")
                    .containsPattern("pgsink_flush_seconds_count\\{" + task + "} [1-9]")
                    .containsPattern("pgsink_flush_seconds_max\\{" + task + "} (0\\.0*[1-9]|[1-9])")
                    .containsPattern("pgsink_copy_bytes_total\\{" + task + "} [1-9]")
                    .containsPattern("pgsink_source_lag_seconds\\{" + task + "} [0-9]");
        }
        assertThat(connect.kafka().consumeAll(1000, "keys-dlq").count()).as("records in the dead-letter queue").isZero();
        connect.deleteConnector("keys");
        connect.deleteConnector("keys-tolerant");
    }

    /**
     * A permanent failure (here the target database dropped under a running connector: validation
     * refuses a connector whose database does not exist) fails the task, with the reason in the
     * REST status trace, and does not leave it retrying for ever.
     */
    @Test
    void aMissingTargetDatabaseFailsTheTaskWithTheReasonInItsStatus()
            throws Exception
    {
        DebeziumTopic lost = new DebeziumTopic("it", "public", "lost", List.of("id"), DOC_COLUMNS);
        connect.kafka().createTopic(lost.topic(), 1);
        String database = "pgsink_gone_" + schema.name();
        String url = schema.server().jdbcUrl().replaceFirst("/[^/?]*(\\?|$)", "/" + database + "$1");
        schema.execute("CREATE DATABASE " + database);
        try {
            try (Connection connection = DriverManager.getConnection(url, schema.server().properties()); Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE lost " + DOCS_TABLE);
            }
            Map<String, String> config = connector("lost", lost.topic(), "public.${table}", 1);
            config.put("target.url", url);
            config.put("offsets.schema", "public");
            startConnector("lost", config, 1);
            lost.insert(producer, 0, lost.row("id", 1L, "title", "t", "body", "b"));
            await("the first row").until(() -> {
                try (Connection connection = DriverManager.getConnection(url, schema.server().properties()); Statement statement = connection.createStatement();
                        ResultSet rows = statement.executeQuery("SELECT count(*) FROM lost")) {
                    return rows.next() && rows.getLong(1) == 1;
                }
            });
            dropDatabase(database);
            lost.insert(producer, 0, lost.row("id", 2L, "title", "t", "body", "b"));
            connect.assertions().assertConnectorIsRunningAndTasksHaveFailed("lost", 1, "the task did not fail");
            String trace = connect.connectorStatus("lost").tasks().get(0).trace();
            assertThat(trace)
                    .contains("org.apache.kafka.connect.errors.ConnectException: lost - ")
                    .contains("database \"" + database + "\" does not exist")
                    .contains("[SQLState 3D000]")
                    .doesNotContain("RetriableException");
            connect.deleteConnector("lost");
        }
        finally {
            dropDatabase(database);
        }
    }

    /**
     * {@code PUT /connector-plugins/.../config/validate} reports one problem per key: a value
     * Connect cannot parse once, and, for a configuration without such problems, what the target
     * lacks (as {@code pgsink check} finds it) on the key to fix.
     */
    @Test
    void validateReportsConfigurationAndTargetProblemsOnTheirKeys()
            throws Exception
    {
        Map<String, String> config = connector("validated", "it.public.vdocs", schema.name() + ".${topic}", 1);
        config.put("name", "validated");
        config.put("flush.max.events", "abc");
        assertThat(validationErrors(config)).isEqualTo(Map.of("flush.max.events", List.of("Invalid value abc for configuration flush.max.events: Not a number of type LONG")));

        config.remove("flush.max.events");
        // fine as it is, the target table created: nothing to report
        schema.execute("CREATE TABLE it_public_vdocs " + DOCS_TABLE);
        assertThat(validationErrors(config)).isEmpty();

        Map<String, String> missingDatabase = new HashMap<>(config);
        String database = "pgsink_no_such_database_" + schema.name();
        missingDatabase.put("target.url", schema.server().jdbcUrl().replaceFirst("/[^/?]*(\\?|$)", "/" + database + "$1"));
        Map<String, List<String>> errors = validationErrors(missingDatabase);
        assertThat(errors).containsOnlyKeys("target.url");
        assertThat(errors.get("target.url")).singleElement().asString().contains(database).contains("SQLState 3D000").contains("create it or fix target.url");

        // a user without privileges on the offsets table's schema and the target table
        String role = "pgsink_validate_" + schema.name();
        schema.execute("CREATE ROLE " + role + " LOGIN");
        try {
            Map<String, String> unprivileged = new HashMap<>(config);
            unprivileged.put("target.url", schema.server().jdbcUrl().replaceFirst("\\?.*", ""));
            unprivileged.put("target.user", role);
            errors = validationErrors(unprivileged);
            assertThat(errors).containsOnlyKeys("offsets.table", "target.table.name.format");
            assertThat(errors.get("offsets.table")).singleElement().asString().startsWith("offsets table \"" + schema.name() + "\".\"pgsink_offsets\"");
            assertThat(errors.get("target.table.name.format")).singleElement().asString()
                    .isEqualTo("table \"" + schema.name() + "\".\"it_public_vdocs\" lacks the privilege(s) USAGE on schema " + schema.name() + ", SELECT, INSERT, DELETE"
                            + " (the sink needs SELECT, INSERT and DELETE on the table and USAGE on its schema)");
        }
        finally {
            schema.execute("DROP ROLE " + role);
        }
        // a target table that is missing, without schema.evolution=add-columns
        schema.execute("DROP TABLE it_public_vdocs");
        errors = validationErrors(config);
        assertThat(errors).containsOnlyKeys("target.table.name.format");
        assertThat(errors.get("target.table.name.format")).singleElement().asString().contains("it_public_vdocs\" does not exist: create it");
    }

    private Map<String, List<String>> validationErrors(Map<String, String> config)
    {
        ConfigInfos result = connect.validateConnectorConfig(PgsinkSinkConnector.class.getSimpleName(), config);
        Map<String, List<String>> errors = new TreeMap<>();
        for (ConfigInfo info : result.configs()) {
            if (!info.configValue().errors().isEmpty()) {
                errors.put(info.configValue().name(), info.configValue().errors());
            }
        }
        return errors;
    }

    /**
     * Scale-out: two workers, a topic of four partitions, two tasks; one worker is stopped while
     * changes stream in (its task moves to the other worker at the rebalance), and the target ends
     * equal to the source, every partition's position stored.
     */
    @Test
    void twoWorkersShareTheTasksAndALeavingWorkerLosesNothing()
            throws Exception
    {
        connect.addWorker();
        await("two workers").until(() -> connect.healthyWorkers().size() == 2);
        DebeziumTopic scaled = new DebeziumTopic("it", "public", "scaled", List.of("id"), DOC_COLUMNS);
        connect.kafka().createTopic(scaled.topic(), 4);
        schema.execute("CREATE TABLE scaled " + DOCS_TABLE);
        Map<String, String> config = connector("scaled", scaled.topic(), schema.name() + ".${table}", 2);
        config.put("flush.max.events", "200");
        startConnector("scaled", config, 2);
        // Connect's assignor usually puts one task on each worker but does not promise it; the worker
        // that leaves below is one running a task, so at least one task moves in any case

        Map<Long, List<String>> expected = new TreeMap<>();
        Random random = new Random(20);
        for (int chunk = 0; chunk < 8; chunk++) {
            for (int i = 0; i < 250; i++) {
                long id = random.nextInt(1500);
                if (expected.containsKey(id) && random.nextInt(5) == 0) {
                    scaled.delete(producer, (int) (id % 4), scaled.row("id", id));
                    expected.remove(id);
                }
                else {
                    String title = "title " + random.nextInt();
                    scaled.update(producer, (int) (id % 4), null, scaled.row("id", id, "title", title, "body", "body " + id));
                    expected.put(id, List.of(String.valueOf(id), title, "body " + id));
                }
            }
            if (chunk == 3) {
                // mid-stream, once both tasks have applied changes: the second worker goes
                await("both tasks applying").untilAsserted(() -> assertThat(query("SELECT count(DISTINCT source_partition) FROM pgsink_offsets WHERE sink_name = 'scaled'"))
                        .containsExactly(List.of("4")));
                connect.removeWorker(workerRunningATask("scaled"));
                await("one worker").until(() -> connect.healthyWorkers().size() == 1);
            }
        }
        connect.assertions().assertConnectorAndExactlyNumTasksAreRunning("scaled", 2, "both tasks did not run on the remaining worker");
        await("the target equal to the source").untilAsserted(() -> {
            Map<Long, List<String>> actual = new TreeMap<>();
            for (List<String> row : query("SELECT id::text, title, body FROM scaled")) {
                actual.put(Long.parseLong(row.get(0)), row);
            }
            List<Long> missing = expected.keySet().stream().filter(id -> !actual.containsKey(id)).limit(20).toList();
            List<Long> extra = actual.keySet().stream().filter(id -> !expected.containsKey(id)).limit(20).toList();
            List<Long> differing = expected.keySet().stream().filter(id -> actual.containsKey(id) && !actual.get(id).equals(expected.get(id))).limit(20).toList();
            assertThat(missing).as("missing rows (of %s expected, %s in the target)", expected.size(), actual.size()).isEmpty();
            assertThat(extra).as("rows the source deleted").isEmpty();
            assertThat(differing).as("rows with other values").isEmpty();
        });
        Map<String, String> positions = new TreeMap<>();
        scaled.lastOffsets().forEach((partition, offset) -> positions.put(scaled.topic() + "-" + partition, String.valueOf(offset)));
        awaitRows("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'scaled' ORDER BY 1", toRows(positions));
        connect.deleteConnector("scaled");
    }

    /**
     * Drops a database its sink is connected to. {@code DROP DATABASE ... WITH (FORCE)} is PostgreSQL
     * 13+ (Greenplum 7 is 12): the sessions are terminated, then the database dropped, again while
     * the sink's pool reconnects in between.
     */
    private void dropDatabase(String database)
    {
        // "database is being accessed by other users" (55006) while the pool reconnects: try again
        await("database " + database + " dropped").ignoreExceptionsMatching(e -> e instanceof SQLException sql && "55006".equals(sql.getSQLState())).untilAsserted(() -> {
            try (Connection connection = DriverManager.getConnection(schema.server().jdbcUrl(), schema.server().properties()); Statement statement = connection.createStatement()) {
                statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + database + "'");
                statement.execute("DROP DATABASE IF EXISTS " + database);
            }
        });
    }

    /** A worker that runs a task of the connector (task statuses name workers by REST host and port). */
    private WorkerHandle workerRunningATask(String connector)
    {
        String workerId = connect.connectorStatus(connector).tasks().get(0).workerId();
        return connect.workers().stream()
                .filter(worker -> workerId.endsWith(":" + worker.url().getPort()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no worker is " + workerId + ": " + connect.workers()));
    }

    /** A number the connector's task reports through Connect's plugin metrics, read over JMX. */
    private static long taskMetric(String connector, String name)
            throws Exception
    {
        return ((Number) taskAttribute(connector, name)).longValue();
    }

    private static Object taskAttribute(String connector, String name)
            throws Exception
    {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        List<ObjectName> names = new ArrayList<>(server.queryNames(new ObjectName("kafka.connect:type=plugins,connector=" + connector + ",*"), null));
        for (ObjectName objectName : names) {
            try {
                return server.getAttribute(objectName, name);
            }
            catch (AttributeNotFoundException e) {
                // another plugin's metrics
            }
        }
        throw new AssertionError("no MBean of connector " + connector + " has " + name + ": " + names);
    }

    /** A row the target refuses stops the task with a message naming where and why; with errors.tolerance=all it goes to the dead-letter queue. */
    @Test
    void badRowsFailTheTaskOrGoToTheDeadLetterQueue()
            throws Exception
    {
        List<Field> columns = List.of(new Field("id", 0, Schema.INT64_SCHEMA), new Field("status", 1, Schema.OPTIONAL_STRING_SCHEMA));
        DebeziumTopic strict = new DebeziumTopic("it", "public", "strict", List.of("id"), columns);
        connect.kafka().createTopic(strict.topic(), 1);
        connect.kafka().createTopic("pgsink-dlq", 1);
        schema.execute("CREATE TABLE strict (id bigint PRIMARY KEY, status varchar(8))", "CREATE TABLE tolerant (id bigint PRIMARY KEY, status varchar(8))");
        strict.insert(producer, 0, strict.row("id", 1L, "status", "new"));
        strict.insert(producer, 0, strict.row("id", 7L, "status", "far too long"));
        strict.insert(producer, 0, strict.row("id", 8L, "status", "new"));

        connect.configureConnector("strict", connector("strict", strict.topic(), schema.name() + ".strict", 1));
        connect.assertions().assertConnectorIsRunningAndTasksHaveFailed("strict", 1, "the task did not fail");
        ConnectorStateInfo status = connect.connectorStatus("strict");
        assertThat(status.tasks().get(0).trace())
                .contains("strict - Cannot write a row of \"" + schema.name() + "\".\"strict\" key (7) column status (from \"" + schema.name() + "\".\"strict\" at offset 1 of it.public.strict-0): "
                        + "value too long for type character varying(8) [SQLState 22001]");
        assertThat(query("SELECT count(*) FROM strict")).containsExactly(List.of("0"));
        connect.deleteConnector("strict");

        Map<String, String> tolerant = connector("tolerant", strict.topic(), schema.name() + ".tolerant", 1);
        tolerant.put("errors.tolerance", "all");
        tolerant.put("errors.deadletterqueue.topic.name", "pgsink-dlq");
        tolerant.put("errors.deadletterqueue.topic.replication.factor", "1");
        tolerant.put("errors.deadletterqueue.context.headers.enable", "true");
        startConnector("tolerant", tolerant, 1);
        awaitRows("SELECT id, status FROM tolerant ORDER BY id", List.of(List.of("1", "new"), List.of("8", "new")));
        ConsumerRecords<byte[], byte[]> dead = connect.kafka().consume(1, TIMEOUT.toMillis(), "pgsink-dlq");
        assertThat(dead.count()).isEqualTo(1);
        ConsumerRecord<byte[], byte[]> record = dead.iterator().next();
        assertThat(new String(record.value(), StandardCharsets.UTF_8)).contains("\"far too long\"");
        Header reason = record.headers().lastHeader("__connect.errors.exception.message");
        assertThat(new String(reason.value(), StandardCharsets.UTF_8)).contains("key (7) column status").contains("value too long").contains("at offset 1 of it.public.strict-0");
        assertThat(new String(record.headers().lastHeader("__connect.errors.offset").value(), StandardCharsets.UTF_8)).isEqualTo("1");
        connect.deleteConnector("tolerant");
    }

    /**
     * Debezium puts a column's default into the record schema; a NULL the source row holds must
     * reach the target as NULL, not as that default (JsonConverter's replace.null.with.default).
     */
    @Test
    void aNullInAColumnWithADefaultStaysNull()
            throws Exception
    {
        List<Field> columns = List.of(new Field("id", 0, Schema.INT64_SCHEMA), new Field("status", 1, SchemaBuilder.string().optional().defaultValue("open").build()));
        DebeziumTopic defaults = new DebeziumTopic("it", "public", "defaults", List.of("id"), columns);
        connect.kafka().createTopic(defaults.topic(), 1);
        schema.execute("CREATE TABLE defaults (id bigint PRIMARY KEY, status text DEFAULT 'open')");
        defaults.insert(producer, 0, defaults.row("id", 1L, "status", null));
        defaults.insert(producer, 0, defaults.row("id", 2L, "status", "closed"));
        defaults.insert(producer, 0, defaults.row("id", 3L));

        startConnector("defaults", connector("defaults", defaults.topic(), schema.name() + ".defaults", 1), 1);
        awaitRows("SELECT id, coalesce(status, 'NULL') FROM defaults ORDER BY id", List.of(List.of("1", "NULL"), List.of("2", "closed"), List.of("3", "NULL")));
        connect.deleteConnector("defaults");
    }

    /**
     * The target drops the task's connections while changes stream in, and the task is restarted:
     * retried flushes and replays leave no record lost and none applied twice (an append-only
     * table shows every duplicate).
     */
    @Test
    void survivesLostConnectionsAndRestartsWithoutLossOrDuplicates()
            throws Exception
    {
        List<Field> columns = List.of(new Field("id", 0, Schema.INT64_SCHEMA), new Field("note", 1, Schema.OPTIONAL_STRING_SCHEMA));
        DebeziumTopic events = new DebeziumTopic("it", "public", "events", List.of(), columns);
        connect.kafka().createTopic(events.topic(), 2);
        schema.execute("CREATE TABLE events (id bigint NOT NULL, note text)");
        Map<String, String> config = connector("events", events.topic(), schema.name() + ".${table}", 2);
        config.put("tables.without.key", "append-only");
        config.put("flush.max.events", "100");
        startConnector("events", config, 2);

        long killed = 0;
        int total = 3000;
        for (int chunk = 0; chunk < 10; chunk++) {
            for (int i = 0; i < total / 10; i++) {
                long id = chunk * (total / 10) + i;
                events.insert(producer, (int) (id % 2), events.row("id", id, "note", "event " + id));
            }
            if (chunk == 2 || chunk == 4 || chunk == 7) {
                killed += Long.parseLong(query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" + applicationName("events") + "'").get(0).get(0));
            }
            if (chunk == 5) {
                connect.restartTask("events", 0);
            }
        }
        assertThat(killed).as("connections dropped under the tasks").isPositive();
        awaitRows("SELECT count(*), count(DISTINCT id) FROM events", List.of(List.of(String.valueOf(total), String.valueOf(total))));
        Map<String, String> positions = new TreeMap<>();
        events.lastOffsets().forEach((partition, offset) -> positions.put(events.topic() + "-" + partition, String.valueOf(offset)));
        awaitRows("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'events' ORDER BY 1", toRows(positions));
        // nothing arrives late: the rows stay exactly these for two seconds
        await("no late rows").during(Duration.ofSeconds(2))
                .untilAsserted(() -> assertThat(query("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM events")).containsExactly(List.of("3000", "3000", "0", "2999")));

        // the target goes back in time (restored from a backup): partition 0's rows after its offset 99
        // (ids 200, 202...) are gone, and so is their position; Kafka's committed offset is at the end.
        // The target decides where reading resumes.
        connect.stopConnector("events");
        connect.assertions().assertConnectorIsStopped("events", "connector events did not stop");
        schema.execute("DELETE FROM events WHERE id % 2 = 0 AND id >= 200",
                "UPDATE pgsink_offsets SET source_offset = '99' WHERE sink_name = 'events' AND source_partition = '" + events.topic() + "-0'");
        connect.resumeConnector("events");
        awaitRows("SELECT count(*), count(DISTINCT id) FROM events", List.of(List.of(String.valueOf(total), String.valueOf(total))));
        awaitRows("SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'events' ORDER BY 1", toRows(positions));
        connect.deleteConnector("events");
    }

    private void awaitCommitted(String connector, Map<String, String> positions)
    {
        Map<String, String> expected = new TreeMap<>();
        positions.forEach((partition, offset) -> expected.put(partition, String.valueOf(Long.parseLong(offset) + 1)));
        await("Kafka offsets of " + connector + " committed").untilAsserted(() -> {
            Map<String, String> committed = new TreeMap<>();
            for (ConnectorOffset offset : connect.connectorOffsets(connector).offsets()) {
                Object topic = offset.partition().get("kafka_topic");
                Object partition = offset.partition().get("kafka_partition");
                committed.put(topic + "-" + partition, String.valueOf(offset.offset().get("kafka_offset")));
            }
            assertThat(committed).isEqualTo(expected);
        });
    }

    void awaitRows(String sql, List<List<String>> expected)
    {
        await(sql).untilAsserted(() -> assertThat(query(sql)).as(sql).isEqualTo(expected));
    }

    private static ConditionFactory await(String what)
    {
        return Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(200));
    }

    List<List<String>> query(String sql)
            throws SQLException
    {
        try (Connection connection = schema.connect(); Statement statement = connection.createStatement()) {
            statement.execute("SET TIME ZONE 'UTC'");
            return Rows.query(connection, sql);
        }
    }
}
