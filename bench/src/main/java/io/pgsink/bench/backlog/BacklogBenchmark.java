package io.pgsink.bench.backlog;

import io.pgsink.bench.network.LatencyRelay;
import io.pgsink.bench.support.LoadAverage;
import io.pgsink.embedded.EmbeddedPostgres;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * The end-to-end benchmark of the standalone service on a replication backlog (issue #29): a
 * backlog of changes written while nothing reads the slot, then read by three cases, each in a
 * JVM of its own started for it (so each pays its own start-up and JIT, as {@code pgsink run} does):
 *
 * <ul>
 * <li><b>source</b>: the server decoding the backlog over pgoutput, read with pgjdbc's replication
 *     API until the backlog's last commit; the limit no client can beat.</li>
 * <li><b>debezium</b>: the Debezium embedded PostgreSQL connector with exactly the properties the
 *     service gives it ({@code StandaloneConfig.debeziumProperties()}; only the offset store is
 *     Kafka's in-memory one), into a consumer that only counts, until the backlog's last row: the
 *     ceiling of a Debezium-based service.</li>
 * <li><b>pgsink</b>: the real service ({@code StandaloneService}, in the case's JVM), until the
 *     target holds the backlog's last row; the target is then checked against the source.</li>
 * </ul>
 *
 * <p>The backlog is written once: a publication and a template slot are created, then the backlog;
 * each measured case reads a copy of the template slot ({@code pg_copy_logical_replication_slot}),
 * so every case decodes the same WAL from the same LSN. The pgsink case gets a fresh target
 * database holding the table as it was when the slot was created. Source and target are databases
 * of one server: the embedded PostgreSQL ({@code wal_level=logical}) unless {@code --url} names one.
 *
 * <p>What each case reports ({@link CaseRun}): the wall time from starting its JVM to the last
 * change, the JVM's CPU time (JVM start included) split by thread (Java threads by name from
 * {@code ThreadMXBean}, JIT compiler and GC threads from {@code /proc/self/task}), and the CPU of the
 * server processes started for it (the walsender that decodes, the target's backends), from
 * {@code /proc/<pid>/stat}.
 */
@Command(name = "BacklogBenchmark", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Writes a replication backlog (big and small transactions), then reads it with the server's "
                + "own decoding (pgoutput), "
                + "the Debezium connector into a counting consumer with pgsink's settings, and the pgsink service, "
                        + "each in a JVM of its own; "
                + "prints wall time, CPU per event per thread and ratios.")
final class BacklogBenchmark
        implements Callable<Integer>
{
    static final String SINK_NAME = "bench";
    static final String PUBLICATION = "bench_pub";
    static final String TEMPLATE_SLOT = "bench_template";
    static final String SOURCE_DATABASE = "bench_source";
    static final String TARGET_DATABASE = "bench_target";
    static final List<String> CASES = List.of("source", "debezium", "pgsink", "pgsink-split");
    static final String LAUNCHER_OPTIONS = "launcher";

    @Option(names = "--url",
            description = "JDBC URL of a server with wal_level=logical to run on (superuser); default: an embedded "
                    + "PostgreSQL started for the run.")
    String url;

    @Option(names = "--scale", defaultValue = "1",
            description = "Backlog size: 1 is 200,000 rows, 400 transactions of 1,000 updates and 20,000 of 5 "
                    + "changes (500,001 events); "
            + "0.1 for a quick run (default: ${DEFAULT-VALUE}).")
    double scale;

    @Option(names = "--runs", defaultValue = "3",
            description = "How many times each case runs, the cases interleaved (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--cases", split = ",", defaultValue = "source,debezium,pgsink",
            description = "Cases to run (default: ${DEFAULT-VALUE}).")
    List<String> cases;

    @Option(names = "--tables", defaultValue = "1",
            description = "Tables the backlog's transactions take in turn, each with the rows --scale says; with "
                    + "more than one, case pgsink-split runs one service per table, each on a slot and a publication "
                    + "of its own (default: ${DEFAULT-VALUE}).")
    int tables;

    @Option(names = "--set",
            description = "A service setting for the debezium and pgsink cases, key=value (repeatable), e.g. "
                    + "flush.pipelined=true.")
    List<String> settings = new ArrayList<>();

    @Option(names = "--jvm-args", defaultValue = LAUNCHER_OPTIONS,
            description = "Options of the JVM of each case, space-separated; " + LAUNCHER_OPTIONS + ": those the "
                    + "distribution's bin/pgsink gives `pgsink run` with the service settings (default: "
                    + "${DEFAULT-VALUE}).")
    String jvmArgs;

    @Option(names = "--target-latency-ms", defaultValue = "0",
            description = "Round trip added between the cases and the target database by a relay ("
                    + "LatencyRelay), e.g. 0.5 (switched network) or 5 (WiFi); 0 connects directly "
                    + "(default: ${DEFAULT-VALUE}).")
    double targetLatencyMs;

    @Option(names = "--steady", split = ",",
            description = "Steady-state cases after each run's backlog cases: fractions of that run's Debezium "
                    + "ceiling (events/s) at which a workload writes while the service streams, e.g. 0.25,0.5; each "
                    + "reports the lag from source commit to target commit (track_commit_timestamp=on: set on the "
                    + "embedded server, required of a --url one).")
    List<Double> steady = new ArrayList<>();

    @Option(names = "--steady-seconds", defaultValue = "40",
            description = "How long each steady-state case writes (default: ${DEFAULT-VALUE}).")
    double steadySeconds;

    @Option(names = "--steady-warm-up-seconds", defaultValue = "10",
            description = "Lag of the transactions committed in this first part of a steady-state case is left out "
                    + "(default: ${DEFAULT-VALUE}).")
    double steadyWarmUpSeconds;

    @Option(names = "--report", description = "Directory to write the Markdown report into; none by default.")
    Path report;

    @Option(names = "--report-name",
            description = "File name of the report, without extension (default: backlog-benchmark-<UTC date and "
                    + "time>).")
    String reportName;

    private final String commandLine;

    BacklogBenchmark(String commandLine)
    {
        this.commandLine = commandLine;
    }

    @Override
    public Integer call()
            throws Exception
    {
        for (String name : cases) {
            if (!CASES.contains(name)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "Unknown case " + name + "; cases: "
                        + CASES);
            }
        }
        if (cases.contains("pgsink-split") && tables < 2) {
            throw new CommandLine.ParameterException(new CommandLine(this), "case pgsink-split needs --tables 2 or "
                    + "more");
        }
        if (!steady.isEmpty() && tables != 1) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--steady writes one table: leave out "
                    + "--tables");
        }
        if (!steady.isEmpty() && !cases.contains("debezium")) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--steady needs the debezium case: its "
                    + "rate in the same run sets the steady rates");
        }
        String loadAverage = LoadAverage.read();
        Backlog backlog = Backlog.of(scale, tables);
        EmbeddedPostgres embedded = url == null ? EmbeddedPostgres.start() : null;
        LatencyRelay relay = null;
        try {
            String serverUrl = embedded != null ? embedded.jdbcUrl("postgres") + "?user=postgres" : url;
            relay = targetLatencyMs > 0 ? LatencyRelay.forUrl(serverUrl, targetLatencyMs) : null;
            Server server = new Server(serverUrl, relay == null ? serverUrl : relay.relayedUrl(serverUrl),
                    backlog.tableNames());
            // every case runs in the JVM the launcher gives the service, so the ceiling and pgsink differ only in code
            String caseJvmArgs = jvmArgs.equals(LAUNCHER_OPTIONS)
                    ? String.join(" ", LauncherJvmOptions.forRun(server.serviceConfig(TEMPLATE_SLOT, settings)))
                    : jvmArgs;
            System.out.println("JVM options of each case: " + caseJvmArgs);
            if (!steady.isEmpty()) {
                server.enableCommitTimestamps(embedded);
            }
            server.prepare(backlog);
            List<CaseRun> results = new ArrayList<>();
            List<SteadyRun> steadyResults = new ArrayList<>();
            // above every id the backlog writes
            long steadyIds = 1_000_000_000L;
            double[] ceilings = new double[runs + 1];
            for (int run = 1; run <= runs; run++) {
                for (String name : cases) {
                    CaseRun result = server.runCase(name, run, backlog, settings, caseJvmArgs);
                    System.out.println(result.summary());
                    results.add(result);
                    if (name.equals("debezium")) {
                        ceilings[run] = result.events() / result.wallSeconds();
                    }
                }
            }
            // after every backlog case: the slots copied from the template would read the steady writes too
            for (int run = 1; run <= runs; run++) {
                double ceiling = ceilings[run];
                for (double fraction : steady) {
                    steadyIds += 100_000_000L;
                    SteadyRun result = server.runSteady(String.format(Locale.ROOT, "steady %.0f%%", fraction * 100),
                            run, new SteadyState(backlog.rows(), steadyIds), fraction * ceiling, steadySeconds,
                            steadyWarmUpSeconds, -1000 - steadyResults.size(), settings, caseJvmArgs);
                    System.out.println(result.summary());
                    steadyResults.add(result);
                }
            }
            server.dropAll();
            String table = BacklogReport.table(results, backlog)
                    + (steadyResults.isEmpty() ? "" : BacklogReport.steadyTable(steadyResults, steadySeconds,
                            steadyWarmUpSeconds));
            System.out.println();
            System.out.println(table);
            if (report != null) {
                String fileName = reportName != null ? reportName : "backlog-benchmark-"
                        + Instant.now().toString().substring(0, 16).replace(':', '-');
                Path file = report.resolve(fileName + ".md");
                BacklogReport.write(file, commandLine, loadAverage, backlog, settings,
                        "`" + caseJvmArgs + "`" + (jvmArgs.equals(LAUNCHER_OPTIONS) ? ", the launcher's" : ""), table);
                System.out.println("Wrote " + file);
            }
            return 0;
        }
        finally {
            if (relay != null) {
                relay.close();
            }
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /**
     * The backlog's shape: each table's rows, and how many big and small transactions change them; with
     * more than one table, the transactions take the tables in turn.
     */
    record Backlog(long rows, int bigTransactions, int bigSize, int smallTransactions, int tables)
    {
        static Backlog of(double scale)
        {
            return of(scale, 1);
        }

        static Backlog of(double scale, int tables)
        {
            long rows = Math.max(1000, Math.round(200 * scale) * 1000);
            return new Backlog(rows, (int) Math.max(1, Math.round(400 * scale)), 1000, (int) Math.max(1,
                    Math.round(20_000 * scale)), tables);
        }

        /** Change events: the big transactions' updates, 5 per small one, and the last row of each table. */
        long events()
        {
            return (long) bigTransactions * bigSize + 5L * smallTransactions + tables;
        }

        /** {@code t} alone, else {@code t_1} to {@code t_<tables>}. */
        List<String> tableNames()
        {
            List<String> names = new ArrayList<>();
            for (int table = 1; table <= tables; table++) {
                names.add(tables == 1 ? "t" : "t_" + table);
            }
            return names;
        }

        /** A loop body that makes its changes to the table whose turn iteration {@code counter} is. */
        String inTurn(String counter, java.util.function.Function<String, String> changes)
        {
            if (tables == 1) {
                return changes.apply("public.t");
            }
            StringBuilder body = new StringBuilder();
            for (int table = 0; table < tables; table++) {
                body.append(table == 0 ? "IF " : "ELSIF ").append(counter).append(" % ").append(tables)
                        .append(" = ").append(table).append(" THEN ")
                        .append(changes.apply("public.t_" + (table + 1)));
            }
            return body.append(" END IF; ").toString();
        }

        long transactions()
        {
            return bigTransactions + smallTransactions + 1L;
        }

        String describe()
        {
            return String.format(Locale.ROOT,
                    "%s%,d rows; %,d transactions of %,d updates, then %,d of 5 changes (3 updates, 1 insert, 1 "
                            + "delete), then one insert of the last row: %,d events",
                    tables == 1 ? "" : tables + " tables taken in turn, each of ", rows, bigTransactions, bigSize,
                    smallTransactions, events());
        }
    }

    /** The server: source and target databases, the backlog, a slot per case. */
    static final class Server
    {
        private final String url;
        /** The server as the cases' sinks reach it: {@code url}, or the latency relay in front of it. */
        private final String targetServerUrl;
        private final List<String> tables;

        Server(String url, String targetServerUrl, List<String> tables)
        {
            this.url = url;
            this.targetServerUrl = targetServerUrl;
            this.tables = List.copyOf(tables);
        }

        String databaseUrl(String database)
        {
            return databaseUrl(url, database);
        }

        /** The target database where the cases write it (through the relay with {@code --target-latency-ms}). */
        String targetUrl()
        {
            return targetUrl(TARGET_DATABASE);
        }

        /** A target database where the cases write it (through the relay with {@code --target-latency-ms}). */
        String targetUrl(String database)
        {
            return databaseUrl(targetServerUrl, database);
        }

        private static String databaseUrl(String url, String database)
        {
            URI uri = URI.create(url.substring("jdbc:".length()));
            return "jdbc:postgresql://" + uri.getHost() + ":" + (uri.getPort() < 0 ? 5432 : uri.getPort()) + "/"
                    + database + (uri.getQuery() == null ? "" : "?" + uri.getQuery());
        }

        String host()
        {
            return URI.create(url.substring("jdbc:".length())).getHost();
        }

        int port()
        {
            int port = URI.create(url.substring("jdbc:".length())).getPort();
            return port < 0 ? 5432 : port;
        }

        String user()
        {
            String query = URI.create(url.substring("jdbc:".length())).getQuery();
            if (query != null) {
                for (String parameter : query.split("&")) {
                    if (parameter.startsWith("user=")) {
                        return parameter.substring("user=".length());
                    }
                }
            }
            return "postgres";
        }

        private void execute(String database, String... sql)
                throws SQLException
        {
            try (Connection connection = DriverManager.getConnection(databaseUrl(database));
                    Statement statement = connection.createStatement()) {
                for (String each : sql) {
                    statement.execute(each);
                }
            }
        }

        /** track_commit_timestamp=on, which the steady-state lag is read from: set and restarted if embedded. */
        void enableCommitTimestamps(EmbeddedPostgres embedded)
                throws SQLException, IOException, InterruptedException
        {
            try (Connection connection = DriverManager.getConnection(url);
                    Statement statement = connection.createStatement()) {
                try (ResultSet setting = statement.executeQuery("SHOW track_commit_timestamp")) {
                    setting.next();
                    if (setting.getString(1).equals("on")) {
                        return;
                    }
                }
                if (embedded == null) {
                    throw new IllegalStateException("The server at " + url + " has track_commit_timestamp=off; the "
                            + "steady-state cases read the lag from commit timestamps: set it on and restart the "
                            + "server, or leave out --url to use an embedded PostgreSQL");
                }
                statement.execute("ALTER SYSTEM SET track_commit_timestamp = on");
            }
            embedded.restart();
        }

        /** The source database with the table, the publication, the template slot, then the backlog. */
        void prepare(Backlog backlog)
                throws SQLException
        {
            try (Connection connection = DriverManager.getConnection(url);
                    Statement statement = connection.createStatement();
                    ResultSet level = statement.executeQuery("SHOW wal_level")) {
                level.next();
                if (!level.getString(1).equals("logical")) {
                    throw new IllegalStateException("The server at " + url + " has wal_level=" + level.getString(1)
                            + "; the benchmark needs logical. Leave out --url to use an embedded PostgreSQL");
                }
            }
            dropAll();
            execute("postgres", "CREATE DATABASE " + SOURCE_DATABASE);
            execute(SOURCE_DATABASE, table(backlog));
            List<String> tables = backlog.tableNames();
            execute(SOURCE_DATABASE, "CREATE PUBLICATION " + PUBLICATION + " FOR TABLE public."
                    + String.join(", public.", tables));
            if (tables.size() > 1) {
                // one publication per table, for the services that each take one
                for (int table = 0; table < tables.size(); table++) {
                    execute(SOURCE_DATABASE, "CREATE PUBLICATION " + PUBLICATION + "_" + (table + 1)
                            + " FOR TABLE public." + tables.get(table));
                }
            }
            execute(SOURCE_DATABASE, "SELECT pg_create_logical_replication_slot('" + TEMPLATE_SLOT + "', 'pgoutput')");
            long started = System.nanoTime();
            // each loop iteration commits: one source transaction per iteration
            execute(SOURCE_DATABASE, "DO $$ BEGIN FOR k IN 0.." + (backlog.bigTransactions() - 1) + " LOOP "
                    + backlog.inTurn("k", table -> "UPDATE " + table + " SET qty = qty + 1, price = price + 1, "
                            + "updated = updated + interval '1 minute' "
                            + "WHERE id BETWEEN (k * " + backlog.bigSize() + ") % " + backlog.rows() + " + 1 AND (k * "
                            + backlog.bigSize() + ") % " + backlog.rows() + " + " + backlog.bigSize() + "; ")
                    + "COMMIT; END LOOP; END $$",
                    "DO $$ BEGIN FOR i IN 0.." + (backlog.smallTransactions() - 1) + " LOOP "
                    + backlog.inTurn("i", table -> "UPDATE " + table + " SET qty = qty + 2, label = 'changed-' || i "
                            + "WHERE id = 3 * i + 1; "
                    + "UPDATE " + table + " SET active = NOT active WHERE id = 3 * i + 2; "
                    + "UPDATE " + table + " SET price = price * 2, updated = updated + interval '1 hour' WHERE id = 3 "
                            + "* i + 3; "
                    + "INSERT INTO " + table + " VALUES (" + backlog.rows()
                            + " + 1 + i, i, 'new-' || i, i * 0.5, true, timestamptz '2026-11-01 00:00:00+00' + i * "
                                    + "interval '1 second'); "
                    + "DELETE FROM " + table + " WHERE id = " + (backlog.rows() / 2) + " + 1 + i; ")
                    + "COMMIT; END LOOP; END $$");
            for (String table : tables) {
                execute(SOURCE_DATABASE, "INSERT INTO public." + table + " VALUES (-1, 0, 'last', 0, true, now())");
            }
            System.out.printf(Locale.ROOT, "backlog written in %.1f s: %s%n", (System.nanoTime() - started) / 1e9,
                    backlog.describe());
        }

        /** The tables and their rows as they were when the template slot was created. */
        static String[] table(Backlog backlog)
        {
            return backlog.tableNames().stream().flatMap(table -> table(backlog, table).stream())
                    .toArray(String[]::new);
        }

        static List<String> table(Backlog backlog, String table)
        {
            return List.of(
                    "CREATE TABLE public." + table + " (id bigint PRIMARY KEY, qty int, label text, price "
                            + "numeric(12,2), active boolean, updated timestamptz)",
                    "INSERT INTO public." + table + " SELECT g, g % 100, 'label-' || g, g * 0.01, g % 2 = 0, "
                            + "timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second' "
                            + "FROM generate_series(1, " + backlog.rows() + ") g",
                    "VACUUM ANALYZE public." + table);
        }

        CaseRun runCase(String name, int run, Backlog backlog, List<String> settings, String jvmArgs)
                throws Exception
        {
            if (name.equals("pgsink-split")) {
                return runSplit(run, backlog, settings, jvmArgs);
            }
            String slot = "bench_" + name + "_" + run;
            execute(SOURCE_DATABASE, "SELECT pg_copy_logical_replication_slot('" + TEMPLATE_SLOT + "', '" + slot
                    + "')");
            if (name.equals("pgsink")) {
                execute("postgres", "DROP DATABASE IF EXISTS " + TARGET_DATABASE + " WITH (FORCE)", "CREATE DATABASE "
                        + TARGET_DATABASE);
                execute(TARGET_DATABASE, table(backlog));
                execute(TARGET_DATABASE, "CHECKPOINT");
            }
            CaseProcess process = start(name, slot, -1, backlog.events(), serviceConfig(slot, settings),
                    TARGET_DATABASE, backlog.tableNames(), jvmArgs);
            return finish(name, run, process);
        }

        /**
         * One service per table, each in a JVM of its own on a slot, a publication and a target database
         * of its own, all started at once: the case ends when the last of them has its table's last row.
         */
        private CaseRun runSplit(int run, Backlog backlog, List<String> settings, String jvmArgs)
                throws Exception
        {
            List<String> tables = backlog.tableNames();
            List<CaseProcess> processes = new ArrayList<>();
            for (int table = 1; table <= tables.size(); table++) {
                String slot = "bench_split_" + run + "_" + table;
                String target = TARGET_DATABASE + "_" + table;
                execute(SOURCE_DATABASE, "SELECT pg_copy_logical_replication_slot('" + TEMPLATE_SLOT + "', '" + slot
                        + "')");
                execute("postgres", "DROP DATABASE IF EXISTS " + target + " WITH (FORCE)", "CREATE DATABASE "
                        + target);
                execute(target, table(backlog, tables.get(table - 1)).toArray(String[]::new));
                execute(target, "CHECKPOINT");
            }
            for (int table = 1; table <= tables.size(); table++) {
                String slot = "bench_split_" + run + "_" + table;
                String target = TARGET_DATABASE + "_" + table;
                Map<String, String> service = serviceConfig(slot, settings);
                service.put("source.table.include.list", "public." + tables.get(table - 1));
                service.put("source.publication.name", PUBLICATION + "_" + table);
                service.put("sink.name", SINK_NAME + "_" + table);
                service.put("target.url", targetUrl(target));
                processes.add(start("pgsink", slot, -1, 0, service, target, List.of(tables.get(table - 1)), jvmArgs));
            }
            List<CaseRun> parts = new ArrayList<>();
            for (CaseProcess process : processes) {
                parts.add(finish("pgsink-split", run, process));
            }
            Map<String, Long> threads = new TreeMap<>();
            Map<String, Long> server = new TreeMap<>();
            double wall = 0;
            double caseSeconds = 0;
            long cpu = 0;
            for (CaseRun part : parts) {
                wall = Math.max(wall, part.wallSeconds());
                caseSeconds = Math.max(caseSeconds, part.caseSeconds());
                cpu += part.processCpuNanos();
                part.threads().forEach((group, nanos) -> threads.merge(group, nanos, Long::sum));
                part.server().forEach((group, nanos) -> server.merge(group, nanos, Long::sum));
            }
            return new CaseRun("pgsink-split", run, wall, caseSeconds, backlog.events(), cpu, threads, server);
        }

        /**
         * A steady-state case: the service started on a new slot with a target copied from the source
         * at the slot's position, then {@code steady} writes at {@code eventsPerSecond} once the service
         * streams; returns the case with the events written, and the lag of each probe.
         */
        SteadyRun runSteady(String name, int run, SteadyState steady, double eventsPerSecond, double seconds,
                double warmUpSeconds, long lastId, List<String> settings, String jvmArgs)
                throws Exception
        {
            String slot = "bench_steady_" + run + "_" + Math.abs(lastId);
            execute(SOURCE_DATABASE, "SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
            execute("postgres", "DROP DATABASE IF EXISTS " + TARGET_DATABASE + " WITH (FORCE)");
            for (int attempt = 0; ; attempt++) {
                try {
                    // the target as the source is at the slot's position: nothing writes in between
                    execute("postgres", "CREATE DATABASE " + TARGET_DATABASE + " TEMPLATE " + SOURCE_DATABASE);
                    break;
                }
                catch (SQLException e) {
                    // 55006: the walsender of the case before may still be connected to the source
                    if (!"55006".equals(e.getSQLState()) || attempt == 100) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
            execute(TARGET_DATABASE, "DROP PUBLICATION IF EXISTS " + PUBLICATION, "CHECKPOINT");
            CaseProcess process = start("pgsink", slot, lastId, 0, serviceConfig(slot, settings), TARGET_DATABASE,
                    List.of("t"), jvmArgs);
            SteadyState.Written[] written = new SteadyState.Written[1];
            try {
                awaitStreaming(slot);
                written[0] = steady.write(databaseUrl(SOURCE_DATABASE),
                        eventsPerSecond / SteadyState.CHANGES_PER_TRANSACTION, seconds, lastId);
            }
            catch (Exception | Error e) {
                process.process().destroyForcibly();
                throw e;
            }
            CaseRun result = finish(name, run, process);
            SteadyState.Lag lag = steady.lag(databaseUrl(SOURCE_DATABASE), databaseUrl(TARGET_DATABASE), written[0],
                    warmUpSeconds);
            long events = written[0].transactions() * SteadyState.CHANGES_PER_TRANSACTION + 1;
            return new SteadyRun(new CaseRun(result.name(), run, result.wallSeconds(), result.caseSeconds(), events,
                    result.processCpuNanos(), result.threads(), result.server()), eventsPerSecond,
                    written[0].transactions() * SteadyState.CHANGES_PER_TRANSACTION / written[0].seconds(), lag);
        }

        /** Waits until a walsender streams from the slot: the service has started reading. */
        private void awaitStreaming(String slot)
                throws SQLException, InterruptedException
        {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            try (Connection connection = DriverManager.getConnection(databaseUrl(SOURCE_DATABASE));
                    Statement statement = connection.createStatement()) {
                while (System.nanoTime() < deadline) {
                    try (ResultSet result = statement.executeQuery("SELECT 1 FROM pg_replication_slots WHERE "
                            + "slot_name = '" + slot + "' AND active")) {
                        if (result.next()) {
                            return;
                        }
                    }
                    Thread.sleep(50);
                }
            }
            throw new IllegalStateException("the service did not start reading slot " + slot + " within 5 minutes");
        }

        /** A case's JVM, started: its process, when, and the files it reads and writes. */
        record CaseProcess(Process process, long spawnedMillis, String slot, Path directory)
        {
            Path inputFile()
            {
                return directory.resolve("input.properties");
            }

            Path outputFile()
            {
                return directory.resolve("output.properties");
            }

            Path log()
            {
                return directory.resolve("case.log");
            }
        }

        /**
         * Starts a case's JVM: {@code kind} is what it runs (source, debezium, pgsink), {@code tables}
         * the tables whose row {@code lastId} ends it.
         */
        private CaseProcess start(String kind, String slot, long lastId, long events, Map<String, String> service,
                String targetDatabase, List<String> tables, String jvmArgs)
                throws IOException
        {
            Properties input = new Properties();
            input.setProperty("case", kind);
            input.setProperty("slot", slot);
            input.setProperty("lastId", Long.toString(lastId));
            input.setProperty("tables", String.join(",", tables));
            input.setProperty("events", Long.toString(events));
            input.setProperty("sourceUrl", databaseUrl(SOURCE_DATABASE));
            input.setProperty("targetUrl", targetUrl(targetDatabase));
            input.setProperty("targetDatabase", targetDatabase);
            service.forEach((key, value) -> input.setProperty("service." + key, value));
            Path directory = Files.createTempDirectory("pgsink-backlog-");
            Path inputFile = directory.resolve("input.properties");
            Path outputFile = directory.resolve("output.properties");
            Path log = directory.resolve("case.log");
            try (OutputStream out = Files.newOutputStream(inputFile)) {
                input.store(out, null);
            }
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            for (String arg : jvmArgs.trim().split("\\s+")) {
                if (!arg.isEmpty()) {
                    command.add(arg);
                }
            }
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(BacklogCase.class.getName());
            command.add(inputFile.toString());
            command.add(outputFile.toString());
            long spawned = System.currentTimeMillis();
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                    .start();
            return new CaseProcess(process, spawned, slot, directory);
        }

        /** Waits for a case's JVM to end and reads what it measured; drops its slot. */
        private CaseRun finish(String name, int run, CaseProcess started)
                throws IOException, InterruptedException, SQLException
        {
            Process process = started.process();
            Path inputFile = started.inputFile();
            Path outputFile = started.outputFile();
            Path log = started.log();
            Path directory = started.directory();
            if (!process.waitFor(30, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new IllegalStateException("case " + name + " did not finish in 30 minutes; its log: " + log);
            }
            if (process.exitValue() != 0 || !Files.exists(outputFile)) {
                throw new IllegalStateException("case " + name + " failed (exit " + process.exitValue()
                        + "); its log: " + log + "\n" + tail(log));
            }
            Properties output = new Properties();
            try (InputStream in = Files.newInputStream(outputFile)) {
                output.load(in);
            }
            // kept when the case fails, for its log
            for (Path file : List.of(inputFile, outputFile, log, directory)) {
                Files.delete(file);
            }
            dropSlot(started.slot());
            return CaseRun.of(name, run, started.spawnedMillis(), output);
        }

        private static String tail(Path log)
                throws IOException
        {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        }

        Map<String, String> serviceConfig(String slot, List<String> settings)
        {
            Map<String, String> config = new TreeMap<>();
            config.put("source.database.hostname", host());
            config.put("source.database.port", Integer.toString(port()));
            config.put("source.database.user", user());
            config.put("source.database.dbname", SOURCE_DATABASE);
            config.put("source.table.include.list", "public." + String.join(",public.", tables));
            config.put("source.publication.name", PUBLICATION);
            config.put("source.publication.autocreate.mode", "disabled");
            config.put("source.slot.name", slot);
            // the backlog is all there is to read: no snapshot, no initial load
            config.put("source.snapshot.mode", "no_data");
            config.put("target.url", targetUrl());
            config.put("target.user", user());
            config.put("sink.name", SINK_NAME);
            config.put("http.port", "-1");
            for (String setting : settings) {
                int equals = setting.indexOf('=');
                if (equals <= 0) {
                    throw new IllegalArgumentException("--set takes key=value, not " + setting);
                }
                config.put(setting.substring(0, equals), setting.substring(equals + 1));
            }
            return config;
        }

        private void dropSlot(String slot)
                throws SQLException, InterruptedException
        {
            for (int attempt = 0; ; attempt++) {
                try {
                    execute(SOURCE_DATABASE,
                            "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"
                            + slot + "' AND active_pid IS NOT NULL",
                            "SELECT pg_drop_replication_slot('" + slot + "')");
                    return;
                }
                catch (SQLException e) {
                    // the walsender of a case that just ended may still hold it
                    if (attempt == 100) {
                        throw e;
                    }
                    Thread.sleep(100);
                }
            }
        }

        void dropAll()
                throws SQLException
        {
            try (Connection connection = DriverManager.getConnection(url);
                    Statement statement = connection.createStatement()) {
                statement.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database "
                        + "= '" + SOURCE_DATABASE + "' AND active_pid IS NOT NULL");
                statement.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE "
                        + "database = '" + SOURCE_DATABASE + "'");
                statement.execute("DROP DATABASE IF EXISTS " + SOURCE_DATABASE + " WITH (FORCE)");
                statement.execute("DROP DATABASE IF EXISTS " + TARGET_DATABASE + " WITH (FORCE)");
                for (int table = 1; table <= tables.size(); table++) {
                    statement.execute("DROP DATABASE IF EXISTS " + TARGET_DATABASE + "_" + table + " WITH (FORCE)");
                }
            }
        }
    }

    /** One case's run: wall time, events, CPU nanoseconds by JVM thread group and by server process group. */
    record CaseRun(String name, int run, double wallSeconds, double caseSeconds, long events, long processCpuNanos,
            Map<String, Long> threads, Map<String, Long> server)
    {
        static CaseRun of(String name, int run, long spawnedMillis, Properties output)
        {
            Map<String, Long> threads = new TreeMap<>();
            Map<String, Long> server = new TreeMap<>();
            for (String key : output.stringPropertyNames()) {
                if (key.startsWith("thread.")) {
                    threads.put(key.substring("thread.".length()), Long.parseLong(output.getProperty(key)));
                }
                else if (key.startsWith("server.")) {
                    server.put(key.substring("server.".length()), Long.parseLong(output.getProperty(key)));
                }
            }
            long done = Long.parseLong(output.getProperty("doneMillis"));
            return new CaseRun(name, run, (done - spawnedMillis) / 1e3,
                    Long.parseLong(output.getProperty("caseNanos")) / 1e9, Long.parseLong(output.getProperty("events")),
                    Long.parseLong(output.getProperty("processCpuNanos")), threads, server);
        }

        double cpuMicrosPerEvent()
        {
            return processCpuNanos / 1e3 / events;
        }

        String summary()
        {
            StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
                    "run %d %-8s %,d events in %.1f s (%.1f s after start-up), JVM CPU %.1f s = %.1f us/event;", run,
                    name, events,
                    wallSeconds, caseSeconds, processCpuNanos / 1e9, cpuMicrosPerEvent()));
            Map<String, Long> top = new LinkedHashMap<>();
            threads.entrySet().stream().sorted(Map.Entry.<String,
                    Long>comparingByValue().reversed()).limit(6).forEach(entry -> top.put(entry.getKey(),
                    entry.getValue()));
            top.forEach((thread, nanos) -> text.append(String.format(Locale.ROOT, " %s %.1f s;", thread, nanos / 1e9)));
            server.forEach((process, ticks) -> text.append(String.format(Locale.ROOT, " server %s %.1f s;", process,
                    ticks / 1e9)));
            return text.toString();
        }

        static TreeSet<String> threadGroups(List<CaseRun> runs)
        {
            TreeSet<String> groups = new TreeSet<>();
            runs.forEach(run -> groups.addAll(run.threads().keySet()));
            return groups;
        }
    }

    /** One steady-state case's run: the service's CPU, the rates asked and written, the lag. */
    record SteadyRun(CaseRun run, double offeredEventsPerSecond, double writtenEventsPerSecond, SteadyState.Lag lag)
    {
        String summary()
        {
            return String.format(Locale.ROOT, "run %d %s: %,.0f events/s asked, %,.0f written; %s; JVM CPU %.1f "
                    + "us/event", run.run(), run.name(), offeredEventsPerSecond, writtenEventsPerSecond,
                    lag.describe(), run.cpuMicrosPerEvent());
        }
    }

    /** Runs the benchmark; {@code --help} lists the options. */
    public static void main(String[] args)
    {
        StringBuilder command = new StringBuilder("java -cp bench/target/benchmarks.jar ")
                .append(BacklogBenchmark.class.getName());
        for (String arg : args) {
            command.append(' ').append(arg.contains("?") || arg.contains("&") || arg.contains(" ") ? "'" + arg + "'"
                    : arg);
        }
        System.exit(new CommandLine(new BacklogBenchmark(command.toString())).execute(args));
    }
}
