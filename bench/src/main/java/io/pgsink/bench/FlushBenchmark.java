package io.pgsink.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The macro benchmark: applies the same change streams with pgsink and with the JDBC baselines, in
 * one run against one PostgreSQL, checks that every method leaves exactly the expected rows, and
 * prints events per second and ratios to pgsink.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.pgsink.bench.FlushBenchmark --url jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres
 *      [--events 1000000] [--base-rows 500000] [--batch 10000] [--scenarios S1,S2] [--seed 42] [--methods all|pgsink,jdbc,merged,raw]
 * </pre>
 *
 * Timing is wall-clock for applying the whole stream, one run per method and scenario; run it
 * more than once before believing a difference under 10%.
 */
public final class FlushBenchmark
{
    private FlushBenchmark() {}

    public record Result(String scenario, String method, long events, double seconds)
    {
        double eventsPerSecond()
        {
            return events / seconds;
        }
    }

    public static void main(String[] args)
            throws Exception
    {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("url", System.getenv().getOrDefault("PGSINK_TEST_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres"));
        options.put("events", "1000000");
        options.put("base-rows", "500000");
        options.put("batch", "10000");
        options.put("scenarios", "S1,S2");
        options.put("seed", "42");
        options.put("methods", "all");
        for (int i = 0; i < args.length; i++) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : "";
            if (!options.containsKey(name) || i + 1 >= args.length) {
                System.err.println("Unknown or incomplete option " + args[i] + "; options: " + options.keySet());
                System.exit(2);
            }
            options.put(name, args[++i]);
        }
        List<Result> results = run(options.get("url"), "pgsink_bench", Long.parseLong(options.get("events")), Long.parseLong(options.get("base-rows")),
                Integer.parseInt(options.get("batch")), List.of(options.get("scenarios").split(",")), Long.parseLong(options.get("seed")), options.get("methods"), true);
        System.out.println();
        System.out.println(table(results));
    }

    public static List<Result> run(String url, long events, long baseRows, int batch, List<String> scenarios, long seed, boolean verbose)
            throws SQLException
    {
        return run(url, "pgsink_bench", events, baseRows, batch, scenarios, seed, "all", verbose);
    }

    /** Runs in {@code schema}, which is dropped and re-created first and dropped at the end. */
    public static List<Result> run(String url, String schema, long events, long baseRows, int batch, List<String> scenarios, long seed, String methodFilter, boolean verbose)
            throws SQLException
    {
        List<Result> results = new ArrayList<>();
        try (BenchmarkDatabase database = new BenchmarkDatabase(url, schema)) {
            for (String scenario : scenarios) {
                Workload workload = switch (scenario.trim()) {
                    case "S1" -> Workload.inserts(events, seed);
                    case "S2" -> Workload.mixed(events, baseRows, seed);
                    default -> throw new IllegalArgumentException("Unknown scenario " + scenario + ": use S1 or S2");
                };
                List<Method> methods = new ArrayList<>(List.of(new PgsinkMethod(), new JdbcBatchMethod(), new MergedUpsertMethod()));
                if (workload.baseRows == 0) {
                    methods.add(new RawCopyMethod());
                }
                if (!methodFilter.equals("all")) {
                    // e.g. --methods pgsink,merged: keep methods whose name starts with one of the words
                    List<String> wanted = List.of(methodFilter.toLowerCase(Locale.ROOT).split(","));
                    methods.removeIf(method -> wanted.stream().noneMatch(word -> method.name().toLowerCase(Locale.ROOT).startsWith(word.trim())));
                }
                database.execute("DROP TABLE IF EXISTS expected", "CREATE TABLE expected (" + Workload.COLUMNS_WITHOUT_KEY + ")");
                try (Connection connection = database.connect(false)) {
                    connection.setAutoCommit(false);
                    RawCopyMethod.copyRows(connection, "expected", new ArrayList<>(workload.finalState.values()), 100_000);
                }
                for (Method method : methods) {
                    String table = "target_" + results.size();
                    database.execute("DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (" + (method.unindexedTarget() ? Workload.COLUMNS_WITHOUT_KEY : Workload.COLUMNS) + ")");
                    if (workload.baseRows > 0) {
                        database.execute(Workload.baseRowsSql(table, workload.baseRows));
                    }
                    database.execute("VACUUM ANALYZE " + table, "CHECKPOINT");
                    long start = System.nanoTime();
                    method.apply(database, table, workload, batch);
                    double seconds = (System.nanoTime() - start) / 1e9;
                    verify(database, table, method);
                    database.execute("DROP TABLE " + table);
                    Result result = new Result(workload.name, method.name(), workload.changes.size(), seconds);
                    results.add(result);
                    if (verbose) {
                        System.out.printf(Locale.ROOT, "%-12s %-36s %,10d events %8.2f s %,12.0f events/s  (final state verified)%n",
                                result.scenario(), result.method(), result.events(), result.seconds(), result.eventsPerSecond());
                    }
                }
            }
        }
        return results;
    }

    /** Every method must leave exactly the expected rows: no more, no fewer, no other values. */
    static void verify(BenchmarkDatabase database, String table, Method method)
            throws SQLException
    {
        try (Connection connection = database.connect(false); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT (SELECT count(*) FROM (SELECT * FROM " + table + " EXCEPT ALL SELECT * FROM expected) a),"
                        + " (SELECT count(*) FROM (SELECT * FROM expected EXCEPT ALL SELECT * FROM " + table + ") b), (SELECT count(*) FROM expected)")) {
            rows.next();
            long extra = rows.getLong(1);
            long missing = rows.getLong(2);
            if (extra != 0 || missing != 0) {
                throw new IllegalStateException(method.name() + " left a wrong final state in " + table + ": " + extra + " unexpected rows, " + missing + " missing rows of " + rows.getLong(3));
            }
        }
    }

    static String table(List<Result> results)
    {
        StringBuilder table = new StringBuilder("| scenario | method | events | seconds | events/s | vs pgsink |\n|---|---|---:|---:|---:|---:|\n");
        for (Result result : results) {
            double pgsink = results.stream().filter(other -> other.scenario().equals(result.scenario()) && other.method().startsWith("pgsink"))
                    .mapToDouble(Result::eventsPerSecond).findFirst().orElse(Double.NaN);
            table.append(String.format(Locale.ROOT, "| %s | %s | %,d | %.2f | %,.0f | %.2fx |%n",
                    result.scenario(), result.method(), result.events(), result.seconds(), result.eventsPerSecond(), result.eventsPerSecond() / pgsink));
        }
        return table.toString();
    }
}
