package io.pgsink.bench.backlog;

import io.pgsink.bench.network.LatencyRelay;
import io.pgsink.bench.support.LoadAverage;
import io.pgsink.embedded.EmbeddedPostgres;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
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
            BacklogServer server = new BacklogServer(serverUrl, relay == null ? serverUrl : relay.relayedUrl(serverUrl),
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
