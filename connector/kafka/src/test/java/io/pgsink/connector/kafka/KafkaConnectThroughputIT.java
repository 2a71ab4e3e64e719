package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * A measurement, not a test of speed (it asserts only that each target ends equal to the source):
 * how fast pgsink's connector drains a topic of Debezium change events in a real Kafka Connect
 * worker, next to the Debezium JDBC sink connector ({@code io.debezium.connector.jdbc.JdbcSinkConnector},
 * its plugin archive from Maven Central) in the same run. Runs only with {@code -Dpgsink.measure=true}:
 * <pre>
 * ./mvnw -B verify -pl connector/kafka -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=KafkaConnectThroughputIT -Dfailsafe.failIfNoSpecifiedTests=false -Dpgsink.measure=true
 * </pre>
 * A broker (KRaft, in the test JVM) holds a topic of {@value #PARTITIONS} partitions, filled once
 * with {@code pgsink.measure.events} change events (default 150,000) as the Debezium PostgreSQL
 * connector writes them with {@code JsonConverter} and schemas (the full envelope with its {@code source}
 * block, and Debezium 3's context headers on every record): creates, updates and deletes (each
 * delete followed by its tombstone) over {@code pgsink.measure.keys} keys (default 20,000), so that
 * keys repeat within a batch; and a warm-up topic of 30,000 such events. Each run starts a fresh
 * worker process ({@code ConnectDistributed}, the plugins installed on its {@code plugin.path} as a
 * user installs them), has a connector drain the warm-up topic (untimed: class loading and the JIT,
 * as in a worker that has run for a while), then creates a new connector (a new consumer group)
 * reading the measured topic from offset 0 into an empty table, and stops the clock when the target
 * holds the source's final state (row count and the sum of a per-event version column, polled every
 * 100 ms; then every row compared, untimed). The clock includes the task's start and the consumer
 * group's join, the same for every sink; the worker's CPU seconds (from /proc) are those of the
 * timed part, and those of the connector's task threads. A no-op sink ({@link NoOpSinkConnector}) with
 * the same converters gives the worker's ceiling; its clock stops when its task was handed every record.
 * The cases ({@code pgsink.measure.cases}, default the no-op sinks, the Debezium JDBC sink and pgsink with
 * each converter setup) run in turn, in a rotated order in each of {@code pgsink.measure.rounds} rounds
 * (default 3); ratios are to the no-op sink with the same converters and to the Debezium JDBC sink of
 * the same round. {@code -Dpgsink.measure.profile=true} records the timed part of each run with
 * Java Flight Recorder ({@code jcmd JFR.start}, settings=profile) into {@code target/throughput-jfr/}.
 */
@TestInstance(PER_CLASS)
class KafkaConnectThroughputIT
{
    static {
        System.setProperty("org.slf4j.simpleLogger.log.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "warn");
        System.setProperty("org.slf4j.simpleLogger.log.state.change.logger", "warn");
    }

    private static final int PARTITIONS = 4;
    private static final int EVENTS = Integer.getInteger("pgsink.measure.events", 150_000);
    private static final int KEYS = Integer.getInteger("pgsink.measure.keys", 20_000);
    private static final int WARM_UP_EVENTS = 30_000;
    private static final int ROUNDS = Integer.getInteger("pgsink.measure.rounds", 3);
    private static final boolean PROFILE = Boolean.getBoolean("pgsink.measure.profile");
    private static final Duration TIMEOUT = Duration.ofMinutes(15);
    private static final Schema AMOUNT = Decimal.builder(2).parameter("connect.decimal.precision", "12").optional().build();
    private static final List<Field> COLUMNS = List.of(
            new Field("id", 0, Schema.INT64_SCHEMA),
            new Field("status", 1, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("amount", 2, AMOUNT),
            new Field("note", 3, Schema.OPTIONAL_STRING_SCHEMA),
            new Field("version", 4, Schema.OPTIONAL_INT64_SCHEMA));
    // no timestamp column: the Debezium JDBC sink's UNNEST inserts (its fastest path) send an
    // io.debezium.time.MicroTimestamp as its number, which PostgreSQL refuses ("date/time field value out of range")
    private static final String TABLE = "(id bigint PRIMARY KEY, status varchar(16), amount numeric(12,2), note text, version bigint)";
    private static final String ROWS = "SELECT id, status, amount, note, version FROM %s ORDER BY id";
    private static final String[] STATUSES = {"new", "paid", "packed", "shipped", "delivered", "returned"};

    /**
     * The measured cases: the Debezium JDBC sink as the benchmarks elsewhere configure it (upsert,
     * deletes, reduction buffer, UNNEST inserts, batches of 10,000), pgsink with the same consumer
     * settings and its defaults on 1, 2 and 4 tasks, pgsink with other settings ({@link #tuned()}), and
     * pgsink reading the JSON itself ({@code record.format=debezium-json}, {@code ByteArrayConverter}) on 1 and 2 tasks.
     */
    private enum Case
    {
        /** A task that does nothing, with JsonConverter (schemas on) and Connect's default header converter. */
        NOOP_JSON("noop-json", 1, Converters.JSON),
        /** A task that does nothing, with ByteArrayConverter for keys, values and headers. */
        NOOP_BYTES("noop-bytes", 1, Converters.BYTES),
        DEBEZIUM("debezium-jdbc", 1, Converters.JSON),
        PGSINK("pgsink", 1, Converters.JSON),
        PGSINK_2_TASKS("pgsink-2-tasks", 2, Converters.JSON),
        PGSINK_4_TASKS("pgsink-4-tasks", 4, Converters.JSON),
        PGSINK_TUNED("pgsink-tuned", 1, Converters.JSON),
        /** record.format=debezium-json with ByteArrayConverter for keys and values: pgsink reads the JSON itself. */
        PGSINK_DEBEZIUM_JSON("pgsink-debezium-json", 1, Converters.BYTES_SIMPLE_HEADERS),
        PGSINK_DEBEZIUM_JSON_2_TASKS("pgsink-debezium-json-2-tasks", 2, Converters.BYTES_SIMPLE_HEADERS),
        /** As pgsink-debezium-json, and ByteArrayConverter for headers too: the setup the docs recommend. */
        PGSINK_BYTES("pgsink-bytes", 1, Converters.BYTES),
        /** As pgsink-bytes, with flush.pipelined=true: the flushes apply on a thread of their own, off the task's. */
        PGSINK_BYTES_PIPELINED("pgsink-bytes-pipelined", 1, Converters.BYTES);

        final String label;
        final int tasks;
        final Converters converters;

        Case(String label, int tasks, Converters converters)
        {
            this.label = label;
            this.tasks = tasks;
            this.converters = converters;
        }

        boolean noOp()
        {
            return this == NOOP_JSON || this == NOOP_BYTES;
        }

        /** The no-op case whose worker converts as this case's: keys and values the same way. */
        Case noOpPeer()
        {
            return converters == Converters.JSON ? NOOP_JSON : NOOP_BYTES;
        }
    }

    /** The worker's converters for keys and values, and for headers. */
    private enum Converters
    {
        JSON, BYTES_SIMPLE_HEADERS, BYTES
    }

    private EmbeddedKafkaCluster kafka;
    private TestingSchema schema;
    private Path buildDirectory;
    private List<Path> pluginPath;
    private Path noOpDone;
    private ChangeStream measured;
    private ChangeStream warmUp;

    @BeforeAll
    void start()
            throws Exception
    {
        if (!Boolean.getBoolean("pgsink.measure")) {
            return;
        }
        buildDirectory = ConnectWorkerProcesses.buildDirectory();
        Path debezium = buildDirectory.resolve("debezium-jdbc-plugin");
        assertThat(debezium).as("the Debezium JDBC sink's plugin, which the measure profile unpacks (-Dpgsink.measure=true)").isDirectory();
        pluginPath = List.of(ConnectWorkerProcesses.installPgsinkPlugin(buildDirectory), debezium, installNoOpPlugin());
        noOpDone = Files.createDirectories(buildDirectory.resolve("throughput-noop"));
        schema = TestingPostgreSqlServer.target().createSchema("kafka_throughput");
        Properties broker = new Properties();
        // a new consumer group gets its partitions at once, not after the default 3 s
        broker.setProperty("group.initial.rebalance.delay.ms", "0");
        kafka = new EmbeddedKafkaCluster(1, broker);
        kafka.start();
        long started = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = kafka.createProducer(Map.of("linger.ms", "20", "batch.size", "262144"))) {
            // both topics exist and have leaders before the first record is sent (the producer does not wait for each)
            DebeziumTopic orders = new DebeziumTopic("bench", "public", "orders", List.of("id"), COLUMNS).asynchronous().withContextHeaders();
            DebeziumTopic warmUpOrders = new DebeziumTopic("bench", "public", "warmup", List.of("id"), COLUMNS).asynchronous().withContextHeaders();
            for (DebeziumTopic topic : List.of(orders, warmUpOrders)) {
                kafka.createTopic(topic.topic(), PARTITIONS);
                await("the leaders of " + topic.topic()).untilAsserted(() -> assertThat(producer.partitionsFor(topic.topic()))
                        .hasSize(PARTITIONS).allSatisfy(partition -> assertThat(partition.leader()).isNotNull()));
            }
            measured = new ChangeStream(orders, EVENTS, 2026, producer);
            warmUp = new ChangeStream(warmUpOrders, WARM_UP_EVENTS, 7, producer);
        }
        System.out.printf(Locale.ROOT, "KafkaConnectThroughputIT: %d change events (%d keys at the end) written to %d partitions in %.1f s%n",
                measured.events, measured.expected.size(), PARTITIONS, (System.nanoTime() - started) / 1e9);
    }

    @AfterAll
    void stop()
            throws SQLException
    {
        if (kafka != null) {
            kafka.stop();
        }
        if (schema != null) {
            schema.close();
        }
    }

    /**
     * A topic of creates, updates and deletes over {@link #KEYS} keys and the table state they
     * leave; every event carries a new version, so the final state's sum of versions identifies it.
     */
    private static final class ChangeStream
    {
        final DebeziumTopic topic;
        final long events;
        /** Records in the topic: the events and a tombstone after each delete. */
        final long records;
        final Map<Long, List<String>> expected = new TreeMap<>();
        final long versionSum;

        ChangeStream(DebeziumTopic topic, int events, long seed, KafkaProducer<byte[], byte[]> producer)
        {
            this.topic = topic;
            this.events = events;
            Random random = new Random(seed);
            for (long version = 1; version <= events; version++) {
                long id = random.nextInt(KEYS);
                int partition = (int) (id % PARTITIONS);
                if (expected.containsKey(id) && random.nextInt(100) < 15) {
                    topic.delete(producer, partition, topic.row("id", id));
                    expected.remove(id);
                    continue;
                }
                String status = STATUSES[random.nextInt(STATUSES.length)];
                BigDecimal amount = BigDecimal.valueOf(random.nextInt(10_000_000), 2);
                String note = "order " + id + " for customer " + random.nextInt(100_000) + ", " + "gift wrap ".repeat(random.nextInt(4));
                Struct row = topic.row("id", id, "status", status, "amount", amount, "note", note, "version", version);
                if (expected.containsKey(id)) {
                    topic.update(producer, partition, null, row);
                }
                else {
                    topic.insert(producer, partition, row);
                }
                expected.put(id, List.of(String.valueOf(id), status, amount.toPlainString(), note, String.valueOf(version)));
            }
            topic.flush(producer);
            records = topic.records();
            versionSum = expected.values().stream().mapToLong(row -> Long.parseLong(row.get(4))).sum();
        }
    }

    @Test
    void drainRatesInAWorkerRelativeToTheDebeziumJdbcSink()
            throws Exception
    {
        assumeTrue(Boolean.getBoolean("pgsink.measure"), "a measurement: run with -Dpgsink.measure=true");
        List<Case> cases = Stream.of(System.getProperty("pgsink.measure.cases", "noop-json,noop-bytes,debezium-jdbc,pgsink,pgsink-debezium-json,pgsink-bytes").split(","))
                .map(label -> Stream.of(Case.values()).filter(each -> each.label.equals(label.trim())).findFirst()
                        .orElseThrow(() -> new IllegalArgumentException("No case " + label + " (pgsink.measure.cases)")))
                .toList();
        Map<Case, List<Run>> runs = new LinkedHashMap<>();
        for (int round = 0; round < ROUNDS; round++) {
            for (int i = 0; i < cases.size(); i++) {
                Case each = cases.get((i + round) % cases.size());
                Run run = drain(each, round);
                runs.computeIfAbsent(each, key -> new ArrayList<>()).add(run);
                System.out.printf(Locale.ROOT, "KafkaConnectThroughputIT: round %d %s (%d task(s)): %.2f s, %.0f events/s, first rows after %.2f s, worker CPU %.1f s (%.1f us/event), task threads CPU %.1f s (%.1f us/event)%n",
                        round + 1, each.label, each.tasks, run.seconds, measured.events / run.seconds, run.firstRowsSeconds, run.workerCpuSeconds,
                        run.workerCpuSeconds * 1e6 / measured.events, run.taskCpuSeconds, run.taskCpuSeconds * 1e6 / measured.events);
            }
        }
        System.out.printf(Locale.ROOT, "KafkaConnectThroughputIT: %d change events (%d records), %d partitions, %d keys; events/s per round, CPU microseconds per event of the "
                + "worker and of its task threads, ratios to the no-op sink with the same key and value converters and to the Debezium JDBC sink of the same round%n",
                measured.events, measured.records, PARTITIONS, KEYS);
        for (Map.Entry<Case, List<Run>> entry : runs.entrySet()) {
            List<Double> rates = entry.getValue().stream().map(run -> measured.events / run.seconds).toList();
            List<Double> workerCpu = entry.getValue().stream().map(run -> run.workerCpuSeconds * 1e6 / measured.events).toList();
            List<Double> taskCpu = entry.getValue().stream().map(run -> run.taskCpuSeconds * 1e6 / measured.events).toList();
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "KafkaConnectThroughputIT: %-28s events/s %s, min %.0f, max %.0f; worker CPU us/event %s; task threads CPU us/event %s",
                    entry.getKey().label, format(rates, "%.0f"), min(rates), max(rates), format(workerCpu, "%.1f"), format(taskCpu, "%.1f")));
            if (!entry.getKey().noOp()) {
                line.append(ratios("no-op sink", runs.get(entry.getKey().noOpPeer()), entry.getValue()));
            }
            if (entry.getKey() != Case.DEBEZIUM && !entry.getKey().noOp()) {
                line.append(ratios("Debezium JDBC", runs.get(Case.DEBEZIUM), entry.getValue()));
            }
            System.out.println(line);
        }
    }

    /** Per round, the time of {@code peer} over that of {@code runs}; empty when the peer did not run. */
    private static String ratios(String peerName, @Nullable List<Run> peer, List<Run> runs)
    {
        if (peer == null) {
            return "";
        }
        List<Double> ratios = new ArrayList<>();
        for (int round = 0; round < runs.size(); round++) {
            ratios.add(peer.get(round).seconds / runs.get(round).seconds);
        }
        return String.format(Locale.ROOT, "; vs %s %s, min %.2f, max %.2f", peerName, format(ratios, "%.2fx"), min(ratios), max(ratios));
    }

    private static String format(List<Double> values, String format)
    {
        return values.stream().map(value -> String.format(Locale.ROOT, format, value)).toList().toString();
    }

    private static double min(List<Double> values)
    {
        return values.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
    }

    private static double max(List<Double> values)
    {
        return values.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    }

    /**
     * @param workerCpuSeconds user and system CPU of the worker's process in the timed part
     * @param taskCpuSeconds of the measured connector's task threads ({@code task-thread-*}), which run its tasks:
     *        poll, conversion and put (and flush, unless pipelined)
     */
    private record Run(double seconds, double firstRowsSeconds, double workerCpuSeconds, double taskCpuSeconds) {}

    /**
     * One case in a fresh worker: first a connector drains the warm-up topic (untimed: class
     * loading, the JIT), then a new connector the measured one from offset 0 into an empty table.
     */
    private Run drain(Case each, int round)
            throws Exception
    {
        String name = each.label + "-" + (round + 1);
        try (ConnectWorkerProcesses workers = new ConnectWorkerProcesses(kafka, buildDirectory, "throughput-" + name, pluginPath)) {
            int port = workers.start("worker", Map.of("connector.client.config.override.policy", "All"), List.of("-Xms1g", "-Xmx2g"), await("the worker of " + name + " to answer"));
            long pid = workers.last().pid();
            apply(workers, port, each, name + "-warm-up", warmUp, pid);
            Path recording = null;
            if (PROFILE) {
                recording = Files.createDirectories(buildDirectory.resolve("throughput-jfr")).resolve(name + ".jfr");
                jcmd(pid, "JFR.start", "name=measured", "settings=profile");
            }
            double cpuBefore = processCpuSeconds(pid);
            Run run = apply(workers, port, each, name, measured, pid);
            run = new Run(run.seconds, run.firstRowsSeconds, run.workerCpuSeconds - cpuBefore, run.taskCpuSeconds);
            if (recording != null) {
                jcmd(pid, "JFR.stop", "name=measured", "filename=" + recording);
            }
            return run;
        }
    }

    /**
     * Drains a stream with a new connector into a new table; returns the worker's CPU seconds at the
     * end (since it started) and those of the connector's task threads.
     */
    private Run apply(ConnectWorkerProcesses workers, int port, Case each, String name, ChangeStream stream, long pid)
            throws Exception
    {
        String table = "t_" + name.replace('-', '_');
        Set<String> otherTaskThreads = taskThreadCpuSeconds(pid).keySet();
        if (each.noOp()) {
            Path done = noOpDone.resolve(name);
            Files.deleteIfExists(done);
            long started = System.nanoTime();
            workers.createConnector(port, name, noOpConfig(each, stream, done));
            await("the no-op task of " + name + " to take " + stream.records + " records").pollInterval(Duration.ofMillis(100))
                    .untilAsserted(() -> assertThat(done).exists());
            long finished = System.nanoTime();
            Run run = new Run((finished - started) / 1e9, 0, processCpuSeconds(pid), taskCpuSeconds(pid, otherTaskThreads));
            workers.deleteConnector(port, name);
            return run;
        }
        schema.execute("CREATE TABLE " + table + " " + TABLE);
        long started = System.nanoTime();
        workers.createConnector(port, name, config(each, stream, table));
        long[] firstRows = {0};
        await("the target of " + name + " equal to the source").pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            String status = workers.get(port, "/connectors/" + name + "/status");
            if (status != null && status.contains("\"FAILED\"")) {
                // not an AssertionError: stops the wait at once
                throw new IllegalStateException(name + " failed: " + status);
            }
            List<String> fingerprint = schema.query("SELECT count(*), coalesce(sum(version), 0) FROM " + table).get(0);
            if (firstRows[0] == 0 && !fingerprint.get(0).equals("0")) {
                firstRows[0] = System.nanoTime();
            }
            assertThat(fingerprint).isEqualTo(List.of(String.valueOf(stream.expected.size()), String.valueOf(stream.versionSum)));
        });
        long done = System.nanoTime();
        Run run = new Run((done - started) / 1e9, (firstRows[0] - started) / 1e9, processCpuSeconds(pid), taskCpuSeconds(pid, otherTaskThreads));
        assertThat(schema.query(ROWS.formatted(table))).as("the rows of " + table).isEqualTo(new ArrayList<>(stream.expected.values()));
        workers.deleteConnector(port, name);
        schema.execute("DROP TABLE " + table);
        return run;
    }

    /** The CPU seconds of the worker's task threads but {@code others} (those of connectors before). */
    private static double taskCpuSeconds(long pid, Set<String> others)
            throws IOException
    {
        return taskThreadCpuSeconds(pid).entrySet().stream().filter(thread -> !others.contains(thread.getKey()))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    /**
     * Per thread id, the CPU seconds of the process's threads named {@code task-thread-…} (Connect's
     * name for the thread that runs a task; /proc shows its first 15 characters).
     */
    private static Map<String, Double> taskThreadCpuSeconds(long pid)
            throws IOException
    {
        Map<String, Double> threads = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Paths.get("/proc", String.valueOf(pid), "task"))) {
            for (Path thread : tasks.toList()) {
                String stat;
                try {
                    stat = Files.readString(thread.resolve("stat"));
                }
                catch (NoSuchFileException e) {
                    // the thread ended since the listing
                    continue;
                }
                if (stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith("task-thread-")) {
                    threads.put(thread.getFileName().toString(), cpuSeconds(stat));
                }
            }
        }
        return threads;
    }

    /** The connector of a no-op case: it writes {@code done} once it was handed every record of {@code stream}. */
    private static Map<String, String> noOpConfig(Case each, ChangeStream stream, Path done)
    {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("connector.class", NoOpSinkConnector.class.getName());
        config.put("tasks.max", "1");
        config.put("topics", stream.topic.topic());
        config.put("consumer.override.auto.offset.reset", "earliest");
        config.put("consumer.override.max.poll.records", "10000");
        config.putAll(converters(each.converters));
        config.put(NoOpSinkConnector.RECORDS, String.valueOf(stream.records));
        config.put(NoOpSinkConnector.DONE_FILE, done.toString());
        return config;
    }

    /** The converters' settings of a connector. */
    private static Map<String, String> converters(Converters converters)
    {
        Map<String, String> config = new LinkedHashMap<>();
        switch (converters) {
            case JSON -> {
                config.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
                config.put("key.converter.schemas.enable", "true");
                config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
                config.put("value.converter.schemas.enable", "true");
                config.put("value.converter.replace.null.with.default", "false");
            }
            case BYTES_SIMPLE_HEADERS -> {
                config.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
                config.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
            }
            case BYTES -> {
                config.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
                config.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
                config.put("header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
            }
        }
        return config;
    }

    /**
     * The no-op connector as a plugin of its own (a jar of its classes and its service file, as
     * {@code plugin.discovery=service_load} wants), in a new directory for the worker's plugin.path.
     */
    private Path installNoOpPlugin()
            throws IOException
    {
        Path plugins = Files.createTempDirectory(buildDirectory, "noop-plugin");
        Path jar = Files.createDirectories(plugins.resolve("noop-sink")).resolve("noop-sink.jar");
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
            for (Class<?> type : List.of(NoOpSinkConnector.class, NoOpSinkConnector.NoOpSinkTask.class)) {
                String entry = type.getName().replace('.', '/') + ".class";
                out.putNextEntry(new JarEntry(entry));
                try (InputStream in = type.getClassLoader().getResourceAsStream(entry)) {
                    out.write(in.readAllBytes());
                }
                out.closeEntry();
            }
            out.putNextEntry(new JarEntry("META-INF/services/org.apache.kafka.connect.sink.SinkConnector"));
            out.write((NoOpSinkConnector.class.getName() + "\n").getBytes(StandardCharsets.UTF_8));
            out.closeEntry();
        }
        return plugins;
    }

    private static void jcmd(long pid, String... command)
            throws IOException, InterruptedException
    {
        List<String> line = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "jcmd").toString(), String.valueOf(pid)));
        line.addAll(List.of(command));
        Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor()).as("jcmd " + String.join(" ", command) + ": " + output).isZero();
    }

    private Map<String, String> config(Case each, ChangeStream stream, String table)
    {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("tasks.max", String.valueOf(each.tasks));
        config.put("topics", stream.topic.topic());
        config.put("consumer.override.auto.offset.reset", "earliest");
        config.put("consumer.override.max.poll.records", "10000");
        config.putAll(converters(each.converters));
        Properties credentials = schema.server().properties();
        if (each == Case.DEBEZIUM) {
            config.put("connector.class", "io.debezium.connector.jdbc.JdbcSinkConnector");
            config.put("connection.url", schema.server().jdbcUrl());
            config.put("connection.username", credentials.getProperty("user", "postgres"));
            config.put("connection.password", credentials.getProperty("password", ""));
            config.put("insert.mode", "upsert");
            config.put("delete.enabled", "true");
            config.put("primary.key.mode", "record_key");
            config.put("schema.evolution", "none");
            config.put("use.reduction.buffer", "true");
            config.put("batch.size", "10000");
            config.put("dialect.postgres.unnest.insert.enabled", "true");
            config.put("collection.name.format", schema.name() + "." + table);
            config.put("quote.identifiers", "false");
            return config;
        }
        config.put("connector.class", PgsinkSinkConnector.class.getName());
        config.put("target.url", schema.server().jdbcUrl());
        credentials.forEach((key, value) -> config.put("target." + key, (String) value));
        config.put("target.table.name.format", schema.name() + "." + table);
        config.put("offsets.schema", schema.name());
        if (each == Case.PGSINK_TUNED) {
            config.putAll(tuned());
        }
        if (each.converters != Converters.JSON) {
            config.put("record.format", "debezium-json");
        }
        if (each == Case.PGSINK_BYTES_PIPELINED) {
            config.put("flush.pipelined", "true");
        }
        return config;
    }

    /**
     * The settings of the tuned case, beyond pgsink's: larger consumer fetches by default, or those
     * of {@code -Dpgsink.measure.tuned=key=value;key=value} to try others.
     */
    private static Map<String, String> tuned()
    {
        String settings = System.getProperty("pgsink.measure.tuned", "consumer.override.fetch.min.bytes=1048576;consumer.override.max.partition.fetch.bytes=4194304");
        Map<String, String> tuned = new LinkedHashMap<>();
        for (String setting : settings.split(";")) {
            int equals = setting.indexOf('=');
            tuned.put(setting.substring(0, equals).trim(), setting.substring(equals + 1).trim());
        }
        return tuned;
    }

    /** User and system CPU seconds of a process so far, from /proc (Linux). */
    private static double processCpuSeconds(long pid)
            throws IOException
    {
        return cpuSeconds(Files.readString(Paths.get("/proc", String.valueOf(pid), "stat")));
    }

    /** User and system CPU seconds of a process's or thread's {@code stat} line (proc(5)). */
    private static double cpuSeconds(String stat)
    {
        // the fields after the command name (which may hold spaces) in parentheses
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        // utime and stime, fields 14 and 15 of proc(5), in clock ticks of (almost always) 100 per second
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
    }

    private static ConditionFactory await(String what)
    {
        return Awaitility.await(what).atMost(TIMEOUT).pollInterval(Duration.ofMillis(250));
    }
}
