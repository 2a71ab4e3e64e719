package io.pgsink.bench.flush;

import io.pgsink.bench.network.LatencyRelay;
import io.pgsink.bench.network.RoundTripCounter;
import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.support.CpuTimes;
import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * The macro benchmark: applies the same change streams with pgsink, the JDBC baselines and the
 * Debezium JDBC sink connector, in one run against one PostgreSQL, checks that every method leaves
 * exactly the expected rows, and prints events per second, ratios to pgsink and CPU seconds.
 *
 * <pre>
 * java -Xmx8g -cp bench/target/benchmarks.jar io.pgsink.bench.flush.FlushBenchmark
 *      --url jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres
 *      [--suites headline,scaling,small] [--report bench/results [--report-name flush-benchmark]]
 *      [--events 1000000] [--base-rows 500000] [--batch 10000] [--scenarios S1,S2,S2W] [--seed 42]
 *      [--methods all|pgsink,jdbc,merged,raw,debezium]
 *      [--wide-events 200000] [--wide-base-rows 100000]
 *      [--scaling-batches 1000,10000,100000] [--scaling-base-rows 500000,5000000] [--small-flushes 2000]
 *      [--small-batch 100]
 *      [--target-latency-ms 0]
 * </pre>
 *
 * <ul>
 * <li><b>headline</b>: S1 (inserts), S2 (mixed changes on a table of {@code base-rows} rows) and
 *     S2W (S2 on a 30-column table with large text values) with every method.</li>
 * <li><b>scaling</b>: S2 at each batch size of {@code scaling-batches} (on {@code base-rows}), then
 *     on each table size of {@code scaling-base-rows} (at {@code batch}).</li>
 * <li><b>small</b>: S2 in flushes of {@code small-batch} events: latency per flush, and round trips
 *     per flush counted by a second run through {@link RoundTripCounter}.</li>
 * </ul>
 *
 * {@code --target-latency-ms} puts the target behind a {@link LatencyRelay} that adds that round
 * trip to every request (0.5 a switched network, 5 WiFi); setting up and checking the tables go
 * directly.
 *
 * <p>Timing is wall-clock for applying the whole stream, one run per method and case; CPU seconds
 * are measured as {@link CpuTimes} describes. {@code --runs N} repeats everything N times and prints
 * the spread ({@link RunSpread}): do not believe a difference within it.
 */
final class FlushBenchmark
{
    private FlushBenchmark() {}

    /**
     * One method applying one workload. {@code roundTrips} is NaN where not counted; {@code
     * serverCpuSeconds} NaN where the server is not on this machine.
     */
    public record Result(String suite, String scenario, String method, long events, int batch, long baseRows,
            double seconds,
            double clientCpuSeconds, double serverCpuSeconds, double roundTrips, String checksum)
    {
        public Result
        {
            requireNonNull(suite, "suite is null");
            requireNonNull(scenario, "scenario is null");
            requireNonNull(method, "method is null");
            requireNonNull(checksum, "checksum is null");
        }

        double eventsPerSecond()
        {
            return events / seconds;
        }

        long flushes()
        {
            return (events + batch - 1) / batch;
        }

        /** Cases compared with each other: same suite, scenario, batch and table size. */
        String caseName()
        {
            return scenario + (suite.equals("headline") ? "" : String.format(Locale.ROOT, ", batch %,d, table %,d rows",
                    batch, baseRows));
        }
    }

    /** What to run; every field has the default of the command line. */
    public record Options(String url, String schema, List<String> suites, long events, long baseRows, int batch,
            List<String> scenarios, long seed, String methods,
            long wideEvents, long wideBaseRows, List<Integer> scalingBatches, List<Long> scalingBaseRows,
                    int smallFlushes, int smallBatch, boolean verbose,
            double targetLatencyMs)
    {
        /** Without added latency: the methods reach the target directly. */
        public Options(String url, String schema, List<String> suites, long events, long baseRows, int batch,
                List<String> scenarios, long seed, String methods,
                long wideEvents, long wideBaseRows, List<Integer> scalingBatches, List<Long> scalingBaseRows,
                        int smallFlushes, int smallBatch, boolean verbose)
        {
            this(url, schema, suites, events, baseRows, batch, scenarios, seed, methods, wideEvents, wideBaseRows,
                    scalingBatches, scalingBaseRows, smallFlushes, smallBatch,
                    verbose, 0);
        }

        public Options
        {
            requireNonNull(url, "url is null");
            requireNonNull(schema, "schema is null");
            suites = List.copyOf(suites);
            scenarios = List.copyOf(scenarios);
            requireNonNull(methods, "methods is null");
            scalingBatches = List.copyOf(scalingBatches);
            scalingBaseRows = List.copyOf(scalingBaseRows);
        }
    }

    /** Runs the benchmark; {@code --help} lists the options ({@link FlushBenchmarkCommand}). */
    public static void main(String[] args)
    {
        System.exit(FlushBenchmarkCommand.execute(args));
    }

    /** Runs in {@code options.schema()}, which is dropped and re-created first and dropped at the end. */
    public static List<Result> run(Options options)
            throws SQLException, IOException
    {
        List<Result> results = new ArrayList<>();
        try (BenchmarkDatabase database = new BenchmarkDatabase(options.url(), options.schema());
                LatencyRelay relay = options.targetLatencyMs() > 0 ? LatencyRelay.forUrl(options.url(),
                        options.targetLatencyMs()) : null) {
            // the methods write through the relay; setting up and checking go directly
            BenchmarkDatabase target = relay == null ? database : database.through(relay.relayedUrl(options.url()));
            Runner runner = new Runner(database, target, options, results);
            for (String suite : options.suites()) {
                switch (suite.trim()) {
                    case "headline" -> {
                        for (String scenario : options.scenarios()) {
                            Workload workload = switch (scenario.trim()) {
                                case "S1" -> Workload.inserts(options.events(), options.seed());
                                case "S2" -> Workload.mixed(options.events(), options.baseRows(), options.seed());
                                case "S2W" -> Workload.mixed("S2W wide mixed", Columns.WIDE, options.wideEvents(),
                                        options.wideBaseRows(), options.seed());
                                default -> throw new IllegalArgumentException("Unknown scenario " + scenario
                                        + ": use S1, S2 or S2W");
                            };
                            runner.run("headline", workload, options.batch(), false, allMethods(workload));
                        }
                    }
                    case "scaling" -> {
                        for (int batch : options.scalingBatches()) {
                            runner.run("scaling", Workload.mixed(options.events(), options.baseRows(), options.seed()),
                                    batch, false, scalingMethods());
                        }
                        for (long baseRows : options.scalingBaseRows()) {
                            if (baseRows != options.baseRows() || !options.scalingBatches().contains(options.batch())) {
                                runner.run("scaling", Workload.mixed(options.events(), baseRows, options.seed()),
                                        options.batch(), false, scalingMethods());
                            }
                        }
                    }
                    case "small" -> {
                        Workload workload = Workload.mixed((long) options.smallFlushes() * options.smallBatch(),
                                options.baseRows(), options.seed());
                        runner.run("small", workload, options.smallBatch(), true, smallMethods());
                    }
                    default -> throw new IllegalArgumentException("Unknown suite " + suite
                            + ": use headline, scaling or small");
                }
            }
        }
        return results;
    }

    private static List<Supplier<Method>> allMethods(Workload workload)
    {
        List<Supplier<Method>> methods = new ArrayList<>(List.of(PgsinkMethod::new, PgsinkMethod::pipelined,
                PgsinkConnectMethod::new));
        if (workload.baseRows > 0) {
            // with only fresh keys (S1) both modes do the same: COPY into the target
            methods.add(() -> new PgsinkMethod(true));
            if (Boolean.getBoolean(PgsinkMethod.LZ4_PROPERTY)) {
                methods.add(PgsinkMethod::serverCompression);
            }
        }
        methods.add(PgsinkMethod::binary);
        methods.addAll(List.of(JdbcBatchMethod::new, MergedUpsertMethod::new));
        if (workload.baseRows > 0 && Boolean.getBoolean(PgsinkMethod.LZ4_PROPERTY)) {
            methods.add(() -> new MergedUpsertMethod(true));
        }
        methods.add(DebeziumJdbcMethod::new);
        if (workload.baseRows == 0) {
            methods.add(() -> new RawCopyMethod(false));
            methods.add(() -> new RawCopyMethod(true));
        }
        return methods;
    }

    private static List<Supplier<Method>> scalingMethods()
    {
        return List.of(PgsinkMethod::new, MergedUpsertMethod::new, DebeziumJdbcMethod::new);
    }

    private static List<Supplier<Method>> smallMethods()
    {
        return List.of(PgsinkMethod::new, PgsinkMethod::copyOnly, () -> new PgsinkMethod(true),
                SmallBatchPrototypeMethod::new, JdbcBatchMethod::new, MergedUpsertMethod::new,
                DebeziumJdbcMethod::new);
    }

    /** Runs methods on workloads and collects results. */
    private static final class Runner
    {
        private static final long WARM_UP_EVENTS = 20_000;

        private final BenchmarkDatabase database;
        /** Where the methods write: {@code database}, or {@code database} behind the latency relay. */
        private final BenchmarkDatabase target;
        private final Options options;
        private final List<Result> results;
        private final CpuTimes cpu;
        /** Methods (by name and columns) that applied their warm-up workload already. */
        private final Set<String> warmedUp = new HashSet<>();
        private int tables;

        Runner(BenchmarkDatabase database, BenchmarkDatabase target, Options options, List<Result> results)
                throws SQLException
        {
            this.database = database;
            this.target = target;
            this.options = options;
            this.results = results;
            this.cpu = CpuTimes.of(database);
        }

        void run(String suite, Workload workload, int batch, boolean countRoundTrips, List<Supplier<Method>> methods)
                throws SQLException, IOException
        {
            workload.createExpected(database, "expected");
            String expectedChecksum = checksum(database, "expected");
            for (Supplier<Method> factory : methods) {
                Method method = factory.get();
                if (!wanted(method)) {
                    continue;
                }
                warmUp(factory, workload, batch);
                Measurement timed = measure(method, workload, batch, target, "expected", expectedChecksum, () -> 0);
                double roundTrips = Double.NaN;
                if (countRoundTrips) {
                    // in front of the relay, if any: the method sees the same latency as in the timed run
                    try (RoundTripCounter counter = RoundTripCounter.forUrl(target.url)) {
                        BenchmarkDatabase proxied = database.through(RoundTripCounter.proxiedUrl(target.url,
                                counter.port()));
                        roundTrips = measure(factory.get(), workload, batch, proxied, "expected", expectedChecksum,
                                counter::roundTrips).roundTrips;
                    }
                }
                Result result = new Result(suite, workload.name, method.name(), workload.changes.size(), batch,
                        workload.baseRows, timed.seconds,
                        timed.clientCpuSeconds, timed.serverCpuSeconds, roundTrips, expectedChecksum);
                results.add(result);
                if (options.verbose()) {
                    System.out.printf(Locale.ROOT,
                            "%-8s %-40s %-40s %,10d events %8.2f s %,12.0f events/s  client %6.2f s  server %s s%s  "
                            + "(final state verified: %s)%n",
                            suite, result.caseName(), result.method(), result.events(), result.seconds(),
                                    result.eventsPerSecond(), result.clientCpuSeconds(),
                                    cpuSeconds(result.serverCpuSeconds()),
                            Double.isNaN(roundTrips) ? "" : String.format(Locale.ROOT, "  %.1f round trips/flush",
                                    roundTrips / result.flushes()), expectedChecksum);
                }
            }
        }

        private boolean wanted(Method method)
        {
            if (options.methods().equals("all")) {
                return true;
            }
            // e.g. --methods pgsink,merged: keep methods whose name starts with one of the words
            List<String> words = List.of(options.methods().toLowerCase(Locale.ROOT).split(","));
            return words.stream().anyMatch(word -> method.name().toLowerCase(Locale.ROOT).startsWith(word.trim()));
        }

        /**
         * The first time a method meets a kind of workload, it applies a small one of that kind
         * ({@value #WARM_UP_EVENTS} events at most), untimed and verified, so that the JIT has
         * compiled its code before its clock starts, as it has in a service that has run for a while.
         * Otherwise whichever method runs first pays for the compilation.
         */
        private void warmUp(Supplier<Method> factory, Workload workload, int batch)
                throws SQLException
        {
            Method method = factory.get();
            if (!warmedUp.add(method.name() + " " + workload.columns.names + " " + (workload.baseRows == 0))) {
                return;
            }
            long events = Math.min(WARM_UP_EVENTS, workload.changes.size());
            Workload warmUp = workload.baseRows == 0
                    ? Workload.inserts("warm-up", workload.columns, events, options.seed() + 1)
                    : Workload.mixed("warm-up", workload.columns, events, events, options.seed() + 1);
            warmUp.createExpected(database, "warm_up_expected");
            measure(method, warmUp, (int) Math.min(batch, events), database, "warm_up_expected", checksum(database,
                    "warm_up_expected"), () -> 0);
            database.execute("DROP TABLE warm_up_expected");
        }

        /**
         * Applies the workload with the method; {@code roundTrips} is read before and after applying (setting up and
         * verifying are not counted).
         */
        private Measurement measure(Method method, Workload workload, int batch, BenchmarkDatabase target,
                String expectedTable, String expectedChecksum, LongSupplier roundTrips)
                throws SQLException
        {
            String table = "target_" + tables++;
            database.execute("DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " ("
                    + workload.columns.definitions(!method.unindexedTarget()) + ")");
            if (workload.baseRows > 0) {
                database.execute(workload.columns.baseRowsSql(table, 1, workload.baseRows));
            }
            database.execute("VACUUM ANALYZE " + table, "CHECKPOINT");
            method.prepare(workload);
            method.setUp(target, table, batch);
            System.gc();
            Measurement measurement = new Measurement();
            try {
                long roundTripsBefore = roundTrips.getAsLong();
                CpuTimes.Sample start = cpu.sample();
                long startNanos = System.nanoTime();
                method.apply(target, table, workload, batch);
                measurement.seconds = (System.nanoTime() - startNanos) / 1e9;
                CpuTimes.Sample end = cpu.sample();
                measurement.roundTrips = roundTrips.getAsLong() - roundTripsBefore;
                measurement.clientCpuSeconds = CpuTimes.clientSeconds(start, end);
                measurement.serverCpuSeconds = CpuTimes.serverSeconds(start, end);
            }
            finally {
                method.tearDown();
            }
            String checksum = checksum(database, table);
            if (!checksum.equals(expectedChecksum)) {
                throw new IllegalStateException(method.name() + " left a wrong final state in " + table + ": "
                        + difference(database, table, expectedTable) + " (checksum " + checksum + ", expected "
                        + expectedChecksum + ")");
            }
            database.execute("DROP TABLE " + table);
            return measurement;
        }
    }

    private static final class Measurement
    {
        double seconds;
        double clientCpuSeconds;
        double serverCpuSeconds;
        long roundTrips;
    }

    /**
     * Row count and an order-independent checksum of a table's rows: the sum of the first 60 bits of
     * each row text's md5. Equal for two tables holding the same rows, whatever their physical order.
     */
    static String checksum(BenchmarkDatabase database, String table)
            throws SQLException
    {
        try (Connection connection = database.connect(false); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*), coalesce(sum(('x' || substr(md5(t::text), "
                        + "1, 15))::bit(60)::bigint), 0) FROM " + table + " t")) {
            rows.next();
            return rows.getLong(1) + " rows, sum " + rows.getBigDecimal(2).toPlainString();
        }
    }

    /** Counts rows that differ from the expected ones, to say what went wrong. */
    private static String difference(BenchmarkDatabase database, String table, String expected)
            throws SQLException
    {
        try (Connection connection = database.connect(false); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT (SELECT count(*) FROM (SELECT * FROM " + table
                        + " EXCEPT ALL SELECT * FROM " + expected + ") a),"
                        + " (SELECT count(*) FROM (SELECT * FROM " + expected + " EXCEPT ALL SELECT * FROM " + table
                                + ") b), (SELECT count(*) FROM " + expected + ")")) {
            rows.next();
            return rows.getLong(1) + " unexpected rows, " + rows.getLong(2) + " missing rows of " + rows.getLong(3);
        }
    }

    /** The results as a Markdown table, with ratios to pgsink in the same case. */
    static String table(List<Result> results)
    {
        StringBuilder table = new StringBuilder("| case | method | events | seconds | events/s | vs pgsink | client "
                + "CPU s | server CPU s |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (Result result : results) {
            table.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.2f | %,.0f | %.2fx | %.2f | %s |%n",
                    result.caseName(), result.method(), result.events(), result.seconds(), result.eventsPerSecond(),
                            ratioToPgsink(results, result), result.clientCpuSeconds(),
                    cpuSeconds(result.serverCpuSeconds())));
        }
        return table.toString();
    }

    /** CPU seconds with two decimals, or "unknown" (NaN: the server is not on this machine, or is a cluster). */
    static String cpuSeconds(double seconds)
    {
        return Double.isNaN(seconds) ? "unknown" : String.format(Locale.ROOT, "%.2f", seconds);
    }

    /** This result's events/s over pgsink's (the method named {@code pgsink (COPY + merge)}) in the same case. */
    static double ratioToPgsink(List<Result> results, Result result)
    {
        double pgsink = results.stream()
                .filter(other -> other.suite().equals(result.suite()) && other.caseName().equals(result.caseName())
                        && other.method().equals(PgsinkMethod.NAME))
                .mapToDouble(Result::eventsPerSecond).findFirst().orElse(Double.NaN);
        return result.eventsPerSecond() / pgsink;
    }
}
