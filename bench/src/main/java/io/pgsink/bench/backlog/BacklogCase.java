package io.pgsink.bench.backlog;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.service.StandaloneService;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.PGReplicationStream;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One measured case of {@link BacklogBenchmark}, in a JVM of its own: reads the backlog from the
 * slot named in its input, then writes what it measured (the moment of the last change, the JVM's
 * CPU by thread group, the CPU of the server processes started for it) to its output file.
 */
public final class BacklogCase
{
    private static final long TICK_NANOS = 10_000_000; // USER_HZ = 100

    private BacklogCase() {}

    public static void main(String[] args)
    {
        try {
            run(args);
        }
        catch (Exception | Error e) {
            // the engine's and the service's threads would keep the JVM, and the benchmark waiting for it, alive
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args)
            throws Exception
    {
        long started = System.nanoTime();
        Timestamp startedAt = new Timestamp(ManagementFactory.getRuntimeMXBean().getStartTime() - 1000);
        Properties input = new Properties();
        try (InputStream in = Files.newInputStream(Path.of(args[0]))) {
            input.load(in);
        }
        Map<String, String> service = new TreeMap<>();
        for (String key : input.stringPropertyNames()) {
            if (key.startsWith("service.")) {
                service.put(key.substring("service.".length()), input.getProperty(key));
            }
        }
        long events = Long.parseLong(input.getProperty("events"));
        String sourceUrl = input.getProperty("sourceUrl");
        String targetUrl = input.getProperty("targetUrl");
        List<String> tables = List.of(input.getProperty("tables", "t").split(","));
        String slot = input.getProperty("slot");
        String targetDatabase = input.getProperty("targetDatabase", BacklogBenchmark.TARGET_DATABASE);
        Properties output = new Properties();
        AtomicReference<Runnable> stop = new AtomicReference<>(() -> {});
        Thread serviceThread = null;
        StandaloneService running = null;
        // at the last change, before anything closes (the walsender is still there)
        Runnable done = () -> {
            try {
                output.setProperty("doneMillis", Long.toString(System.currentTimeMillis()));
                output.setProperty("caseNanos", Long.toString(System.nanoTime() - started));
                com.sun.management.OperatingSystemMXBean system =
                        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
                output.setProperty("processCpuNanos", Long.toString(system.getProcessCpuTime()));
                threads().forEach((group, nanos) -> output.setProperty("thread." + group, Long.toString(nanos)));
                serverProcesses(sourceUrl, startedAt, slot, targetDatabase).forEach((group, nanos) ->
                        output.setProperty("server." + group, Long.toString(nanos)));
            }
            catch (IOException | SQLException e) {
                throw new IllegalStateException(e);
            }
        };
        long counted;
        switch (input.getProperty("case")) {
            case "source" -> counted = decode(sourceUrl, input.getProperty("slot"),
                    service.get("source.publication.name"), events, done);
            case "debezium" -> {
                counted = countDebezium(service, events, tables.size(), stop);
                done.run();
            }
            case "pgsink" -> {
                running = new StandaloneService(StandaloneConfig.parse(service));
                StandaloneService toRun = running;
                serviceThread = new Thread(() -> {
                    try {
                        toRun.run();
                    }
                    catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    catch (RuntimeException e) {
                        e.printStackTrace();
                        System.exit(3);
                    }
                }, "bench-service");
                serviceThread.start();
                for (String table : tables) {
                    awaitLastRow(targetUrl, table, Long.parseLong(input.getProperty("lastId", "-1")));
                }
                done.run();
                counted = events;
            }
            default -> throw new IllegalArgumentException("unknown case " + input.getProperty("case"));
        }
        output.setProperty("events", Long.toString(counted));
        if (running != null) {
            for (String table : tables) {
                verify(sourceUrl, targetUrl, table);
            }
            running.close();
            serviceThread.join(TimeUnit.MINUTES.toMillis(2));
        }
        stop.get().run();
        try (OutputStream out = Files.newOutputStream(Path.of(args[1]))) {
            output.store(out, null);
        }
        System.exit(0);
    }

    /** The server's own decoding: pgoutput messages from the slot until the backlog's last commit;
            returns the changes counted. */
    private static long decode(String url, String slot, String publication, long events, Runnable done)
            throws SQLException
    {
        Properties properties = new Properties();
        PGProperty.REPLICATION.set(properties, "database");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(properties, "10");
        PGProperty.PREFER_QUERY_MODE.set(properties, "simple");
        try (Connection connection = DriverManager.getConnection(url, properties)) {
            PGReplicationStream stream = connection.unwrap(PGConnection.class).getReplicationAPI().replicationStream()
                    .logical()
                    .withSlotName(slot).withSlotOption("proto_version", "1").withSlotOption("publication_names",
                            publication)
                    .withStatusInterval(10, TimeUnit.SECONDS).start();
            long changes = 0;
            while (true) {
                ByteBuffer message = stream.read();
                byte type = message.get(message.position());
                if (type == 'I' || type == 'U' || type == 'D') {
                    changes++;
                }
                else if (type == 'C' && changes >= events) {
                    done.run();
                    stream.close();
                    return changes;
                }
            }
        }
    }

    /** The Debezium connector with the service's properties into a consumer that only counts, until the last row. */
    private static long countDebezium(Map<String, String> service, long events, int tables,
            AtomicReference<Runnable> stop)
            throws Exception
    {
        Properties properties = StandaloneConfig.parse(service).debeziumProperties();
        // the service's offset store reads positions from the target; this case has none
        properties.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        AtomicLong counted = new AtomicLong();
        // each table's last row
        CountDownLatch last = new CountDownLatch(tables);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine
                .create(ChangeEventFormat.of(Connect.class))
                .using(properties)
                .notifying((records, committer) -> {
                    for (RecordChangeEvent<SourceRecord> record : records) {
                        SourceRecord sourceRecord = record.record();
                        if (sourceRecord.value() instanceof Struct value && value.schema().field("op") != null) {
                            counted.incrementAndGet();
                            if (sourceRecord.key() instanceof Struct key && Long.valueOf(-1).equals(key.get("id"))) {
                                last.countDown();
                            }
                        }
                        committer.markProcessed(record);
                    }
                    committer.markBatchFinished();
                })
                .using((success, message, error) -> {
                    if (!success) {
                        failure.set(error != null ? error : new IllegalStateException(message));
                        while (last.getCount() > 0) {
                            last.countDown();
                        }
                    }
                })
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        stop.set(() -> {
            try {
                engine.close();
            }
            catch (IOException e) {
                throw new IllegalStateException(e);
            }
            executor.shutdown();
        });
        last.await();
        if (failure.get() != null) {
            throw new IllegalStateException("the engine failed", failure.get());
        }
        if (counted.get() != events) {
            throw new IllegalStateException("counted " + counted.get() + " change events, expected " + events);
        }
        return counted.get();
    }

    private static void awaitLastRow(String targetUrl, String table, long lastId)
            throws SQLException, InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(20);
        Properties properties = new Properties();
        properties.setProperty("ApplicationName", "bench-poll");
        try (Connection connection = DriverManager.getConnection(targetUrl, properties);
                PreparedStatement statement = connection.prepareStatement("SELECT 1 FROM public." + table
                        + " WHERE id = ?")) {
            statement.setLong(1, lastId);
            while (System.nanoTime() < deadline) {
                try (ResultSet result = statement.executeQuery()) {
                    if (result.next()) {
                        return;
                    }
                }
                // the query's CPU counts as pgsink's (this JVM's main thread), which the ceiling, counting in
                // its consumer, does not pay: every 100 ms it is about 0.1 us/event, at most 100 ms of wall
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("the target did not get the last row within 20 minutes");
    }

    /** The target equals the source: row count and an order-independent checksum of every column. */
    private static void verify(String sourceUrl, String targetUrl, String table)
            throws SQLException
    {
        String query = "SELECT count(*), sum(hashtext(t::text)::numeric) FROM public." + table + " t";
        String source = single(sourceUrl, query);
        String target = single(targetUrl, query);
        if (!source.equals(target)) {
            throw new IllegalStateException("the target's " + table + " differs from the source's: " + target
                    + " against " + source);
        }
    }

    private static String single(String url, String query)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(query)) {
            result.next();
            return result.getString(1) + "/" + result.getString(2);
        }
    }

    /**
     * CPU nanoseconds by thread group: live Java threads by name (digits folded to {@code #}),
     * the JIT compiler and GC threads (not Java threads) from {@code /proc/self/task}.
     */
    static Map<String, Long> threads()
            throws IOException
    {
        Map<String, Long> groups = new TreeMap<>();
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        for (ThreadInfo info : bean.getThreadInfo(bean.getAllThreadIds())) {
            if (info != null) {
                long nanos = bean.getThreadCpuTime(info.getThreadId());
                if (nanos > 0) {
                    groups.merge(info.getThreadName().replaceAll("[0-9]+", "#"), nanos, Long::sum);
                }
            }
        }
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                }
                catch (IOException e) {
                    continue;
                }
                String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
                String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long nanos = (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * TICK_NANOS;
                String group = comm.startsWith("C1 Compiler") || comm.startsWith("C2 Compiler") ? "[JIT]"
                        : comm.startsWith("GC Thread") || comm.startsWith("G1 ") || comm.equals("VM Thread")
                                ? "[GC and VM]" : null;
                if (group != null) {
                    groups.merge(group, nanos, Long::sum);
                }
            }
        }
        return groups;
    }

    /**
     * CPU nanoseconds of the server processes started since this JVM (a second of slack): the
     * walsender that decodes from this case's slot, the backends of its target database, the source's
     * other backends.
     * Those that ended already are not counted. Only when the server runs on this machine.
     */
    static Map<String, Long> serverProcesses(String sourceUrl, Timestamp since, String slot, String targetDatabase)
            throws SQLException
    {
        Map<String, Long> groups = new TreeMap<>();
        try (Connection connection = DriverManager.getConnection(sourceUrl);
                PreparedStatement statement = connection.prepareStatement("SELECT pid, backend_type, datname, "
                        + "pid IS NOT DISTINCT FROM (SELECT active_pid FROM pg_replication_slots WHERE slot_name = ?) "
                        + "FROM pg_stat_activity "
                        + "WHERE backend_start >= ? AND pid <> pg_backend_pid() "
                        + "AND application_name <> 'bench-poll'")) {
            statement.setString(1, slot);
            statement.setTimestamp(2, since);
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    Path stat = Path.of("/proc", Long.toString(result.getLong(1)), "stat");
                    String line;
                    try {
                        line = Files.readString(stat);
                    }
                    catch (IOException e) {
                        continue;
                    }
                    String[] fields = line.substring(line.lastIndexOf(')') + 2).split(" ");
                    long nanos = (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * TICK_NANOS;
                    // a case running beside this one (pgsink-split) has a walsender and a target of its own
                    String group = result.getBoolean(4) ? "walsender"
                            : result.getString(2).equals("walsender") ? null
                            : targetDatabase.equals(result.getString(3)) ? "target backends"
                            : BacklogBenchmark.SOURCE_DATABASE.equals(result.getString(3)) ? "source backends" : null;
                    if (group != null) {
                        groups.merge(group, nanos, Long::sum);
                    }
                }
            }
        }
        return groups;
    }
}
