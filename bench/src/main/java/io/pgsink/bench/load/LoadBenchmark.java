package io.pgsink.bench.load;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.support.CpuTimes;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static java.util.Objects.requireNonNull;

/**
 * The initial-load benchmark: one large table and several smaller ones of mixed types are copied
 * from a source database into indexed target tables of a target database on the same server, by
 * pgsink's initial load (the runnable jar, {@code pgsink run}, timed from the process start until
 * the load's completion row is committed), by {@code psql COPY TO | psql COPY FROM} pipes (one
 * after the other, and all at once), by {@code pg_dump --data-only | psql}, and by Debezium's
 * snapshot path ({@code pgsink run} with {@code source.snapshot.mode=when_needed}, on a smaller
 * table, timed until the target holds every row). Every target table is checked against its source
 * table (count and the sum of every row's md5) before a result counts.
 *
 * <p>CPU: client is the pgsink JVM's, or the psql/pg_dump processes' (bash {@code times}); server
 * is the whole PostgreSQL process tree ({@link CpuTimes}), other clients of the server included.
 */
final class LoadBenchmark
{
    private static final String SOURCE = "pgsink_bench_load_source";
    private static final String TARGET = "pgsink_bench_load_target";
    private static final String COLUMNS = "(id bigint PRIMARY KEY, qty int, label text, price numeric(12,2), active "
            + "boolean, updated timestamptz)";

    /**
     * @param loadSeconds pgsink's own load phase, from the progress table's start row to its
     *         completion row (slot created, tables planned, until the last chunk committed); NaN for other methods
     */
    record Result(String scenario, String method, int run, long rows, double seconds, double loadSeconds,
            double clientCpu, double serverCpu)
    {
        double rowsPerSecond()
        {
            return rows / seconds;
        }
    }

    private final String url;
    private final Path jar;
    private final long bigRows;
    private final int tables;
    private final long rows;
    private final long debeziumRows;
    private final List<Integer> parallelism;
    private final List<String> formats;
    private final int repeat;
    private final List<String> methods;
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    /** The load phase of the last pgsink run, NaN when the last method was another. */
    private double lastLoadSeconds = Double.NaN;

    LoadBenchmark(String url, Path jar, long bigRows, int tables, long rows, long debeziumRows,
            List<Integer> parallelism, List<String> formats, int repeat, List<String> methods)
    {
        this.url = requireNonNull(url, "url is null");
        this.jar = requireNonNull(jar, "jar is null");
        this.bigRows = bigRows;
        this.tables = tables;
        this.rows = rows;
        this.debeziumRows = debeziumRows;
        this.parallelism = List.copyOf(parallelism);
        this.formats = List.copyOf(formats);
        this.repeat = repeat;
        this.methods = List.copyOf(methods);
        URI uri = URI.create(url.substring("jdbc:".length()));
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 5432 : uri.getPort();
        BenchmarkDatabase parameters;
        try {
            parameters = new BenchmarkDatabase(url, "pgsink_bench_load");
            this.user = parameters.user();
            this.password = parameters.password();
            parameters.close();
        }
        catch (SQLException e) {
            throw new IllegalStateException("Cannot reach " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    List<Result> run()
            throws Exception
    {
        List<Result> results = new ArrayList<>();
        List<String> small = new ArrayList<>();
        for (int i = 1; i <= tables; i++) {
            small.add("t" + i);
        }
        try (BenchmarkDatabase cpuProbe = new BenchmarkDatabase(url, "pgsink_bench_load")) {
            CpuTimes cpu = CpuTimes.of(cpuProbe);
            admin("DROP DATABASE IF EXISTS " + SOURCE + " WITH (FORCE)", "DROP DATABASE IF EXISTS " + TARGET
                    + " WITH (FORCE)", "CREATE DATABASE " + SOURCE, "CREATE DATABASE " + TARGET);
            System.out.println("seeding " + bigRows + " + " + tables + " x " + rows + " + " + debeziumRows + " rows");
            seed("big", bigRows);
            for (String table : small) {
                seed(table, rows);
            }
            if (methods.contains("debezium")) {
                seed("dbz", debeziumRows);
            }
            execute(SOURCE, "VACUUM ANALYZE", "CHECKPOINT");
            Map<String, String> digests = new TreeMap<>();
            for (String table : appended(small, "big")) {
                digests.put(table, digest(SOURCE, table));
            }
            if (methods.contains("debezium")) {
                digests.put("dbz", digest(SOURCE, "dbz"));
            }
            for (int run = 1; run <= repeat; run++) {
                for (List<String> scenario : List.of(List.of("big"), small)) {
                    // the large table, or the smaller ones (of which there may be one)
                    boolean big = scenario.equals(List.of("big"));
                    String name = big ? "one table, " + bigRows + " rows" : tables + " tables of " + rows + " rows";
                    long scenarioRows = big ? bigRows : tables * rows;
                    if (methods.contains("pipe")) {
                        results.add(measure(cpu, name, big ? "psql | psql" : "psql | psql, one table after the other",
                                run, scenario, scenarioRows, digests,
                                () -> pipes(scenario, false)));
                    }
                    if (methods.contains("parallel-pipes") && !big) {
                        results.add(measure(cpu, name, "psql | psql, all tables at once", run, scenario, scenarioRows,
                                digests, () -> pipes(scenario, true)));
                    }
                    if (methods.contains("pg_dump")) {
                        results.add(measure(cpu, name, "pg_dump --data-only | psql", run, scenario, scenarioRows,
                                digests, () -> pgDump(scenario)));
                    }
                    if (methods.contains("pgsink")) {
                        for (int workers : parallelism) {
                            for (String format : formats) {
                                results.add(measure(cpu, name, "pgsink initial load (parallelism " + label(workers)
                                        + ", " + format + ")", run, scenario, scenarioRows, digests,
                                        () -> pgsink(scenario, Map.of("initial.load.parallelism",
                                                Integer.toString(workers), "initial.load.copy.format", format),
                                                false)));
                            }
                        }
                    }
                }
                if (methods.contains("debezium")) {
                    String name = "one table, " + debeziumRows + " rows";
                    List<String> scenario = List.of("dbz");
                    results.add(measure(cpu, name, "Debezium snapshot → pgsink (snapshot.mode=when_needed)", run,
                            scenario, debeziumRows, digests,
                            () -> pgsink(scenario, Map.of("source.snapshot.mode", "when_needed"), true)));
                    results.add(measure(cpu, name, "pgsink initial load (parallelism " + label(parallelism.get(0))
                            + ", text)", run, scenario, debeziumRows, digests,
                            () -> pgsink(scenario, Map.of("initial.load.parallelism",
                                    Integer.toString(parallelism.get(0))), false)));
                }
            }
        }
        finally {
            admin("DROP DATABASE IF EXISTS " + SOURCE + " WITH (FORCE)", "DROP DATABASE IF EXISTS " + TARGET
                    + " WITH (FORCE)");
        }
        return results;
    }

    @FunctionalInterface
    private interface Method
    {
        /** Copies the tables; returns the client CPU seconds it used. */
        double copy()
                throws Exception;
    }

    private Result measure(CpuTimes cpu, String scenario, String method, int run, List<String> tables, long rowCount,
            Map<String, String> digests, Method copy)
            throws Exception
    {
        for (String table : tables) {
            execute(TARGET, "DROP TABLE IF EXISTS public." + table, "CREATE TABLE public." + table + " " + COLUMNS);
        }
        execute(TARGET, "DROP TABLE IF EXISTS public.pgsink_initial_load", "DROP TABLE IF EXISTS public.pgsink_offsets",
                "CHECKPOINT");
        System.out.printf(Locale.ROOT, "%s: %s (run %d)...%n", scenario, method, run);
        lastLoadSeconds = Double.NaN;
        CpuTimes.Sample start = cpu.sample();
        long startNanos = System.nanoTime();
        double client = copy.copy();
        double seconds = (System.nanoTime() - startNanos) / 1e9;
        CpuTimes.Sample end = cpu.sample();
        for (String table : tables) {
            String actual = digest(TARGET, table);
            if (!actual.equals(digests.get(table))) {
                throw new IllegalStateException(method + " left target table " + table + " unequal to its source: "
                        + actual + " instead of " + digests.get(table));
            }
        }
        Result result = new Result(scenario, method, run, rowCount, seconds, lastLoadSeconds, client,
                CpuTimes.serverSeconds(start, end));
        System.out.printf(Locale.ROOT, "  %.1f s, %,.0f rows/s, client CPU %.1f s, server CPU %.1f s, target checked%n",
                seconds, result.rowsPerSecond(), client, result.serverCpu());
        return result;
    }

    private double pipes(List<String> tables, boolean parallel)
            throws Exception
    {
        List<Process> processes = new ArrayList<>();
        double client = 0;
        for (String table : tables) {
            Process process = bash(psql(SOURCE) + " -c 'COPY public." + table + " TO STDOUT' | " + psql(TARGET)
                    + " -c 'COPY public." + table + " FROM STDIN'");
            if (parallel) {
                processes.add(process);
            }
            else {
                client += finish(process);
            }
        }
        for (Process process : processes) {
            client += finish(process);
        }
        return client;
    }

    private double pgDump(List<String> tables)
            throws Exception
    {
        StringBuilder command = new StringBuilder("pg_dump --data-only -h " + host + " -p " + port + " -U " + user);
        for (String table : tables) {
            command.append(" -t public.").append(table);
        }
        command.append(' ').append(SOURCE).append(" | ").append(psql(TARGET)).append(" -v ON_ERROR_STOP=1");
        return finish(bash(command.toString()));
    }

    private String psql(String database)
    {
        return "psql -X -q -h " + host + " -p " + port + " -U " + user + " -d " + database;
    }

    private Process bash(String command)
            throws IOException
    {
        ProcessBuilder builder = new ProcessBuilder("bash", "-o", "pipefail", "-c", command
                + "; status=$?; times; exit $status").redirectErrorStream(true);
        if (!password.isEmpty()) {
            builder.environment().put("PGPASSWORD", password);
        }
        return builder.start();
    }

    /** Waits for the process; returns its children's CPU seconds (the second line of bash's {@code times}). */
    private static double finish(Process process)
            throws Exception
    {
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException("failed: " + output);
        }
        String[] lines = output.strip().split("\n");
        double seconds = 0;
        for (String time : lines[lines.length - 1].trim().split("\\s+")) {
            int minutes = time.indexOf('m');
            seconds += Double.parseDouble(time.substring(0, minutes)) * 60 + Double.parseDouble(
                    time.substring(minutes + 1, time.length() - 1));
        }
        return seconds;
    }

    /**
     * Runs {@code pgsink run} until the tables are loaded (or, with {@code countRows}, until the target holds every
     * row); returns the JVM's CPU seconds.
     */
    private double pgsink(List<String> tables, Map<String, String> settings, boolean countRows)
            throws Exception
    {
        String sinkName = "bench_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36);
        Map<String, String> properties = new TreeMap<>();
        properties.put("source.database.hostname", host);
        properties.put("source.database.port", Integer.toString(port));
        properties.put("source.database.user", user);
        properties.put("source.database.dbname", SOURCE);
        properties.put("source.table.include.list", "public\\.(" + String.join("|", tables) + ")");
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("target.url", "jdbc:postgresql://" + host + ":" + port + "/" + TARGET);
        properties.put("target.user", user);
        if (!password.isEmpty()) {
            properties.put("source.database.password", password);
            properties.put("target.password", password);
        }
        properties.put("sink.name", sinkName);
        properties.put("http.port", "-1");
        properties.putAll(settings);
        Path config = Files.createTempFile("pgsink-bench", ".properties");
        List<String> lines = new ArrayList<>();
        properties.forEach((key, value) -> lines.add(key + "=" + value));
        Files.write(config, lines);
        Path log = Files.createTempFile("pgsink-bench", ".log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process process = new ProcessBuilder(java, "-jar", jar.toString(), "run", "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try (Connection target = connect(TARGET); Statement statement = target.createStatement()) {
            String done = countRows
                    ? "SELECT count(*) = " + debeziumRows + " FROM public." + tables.get(0)
                    : "SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = 'pgsink_initial_load') AND EXISTS "
                            + "(SELECT 1 FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName
                            + "' AND chunk = -2)";
            while (true) {
                if (!process.isAlive()) {
                    throw new IllegalStateException("pgsink exited: " + Files.readString(log));
                }
                boolean finished;
                try (ResultSet result = statement.executeQuery(done)) {
                    result.next();
                    finished = result.getBoolean(1);
                }
                catch (SQLException e) {
                    // the progress table does not exist yet
                    finished = false;
                }
                if (finished) {
                    break;
                }
                Thread.sleep(20);
            }
            double cpuSeconds = processCpuSeconds(process.pid());
            if (!countRows) {
                try (ResultSet result = statement.executeQuery("SELECT extract(epoch FROM max(loaded_at) FILTER "
                        + "(WHERE chunk = -2) - min(loaded_at) FILTER (WHERE chunk = -1))"
                        + " FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName + "'")) {
                    result.next();
                    lastLoadSeconds = result.getDouble(1);
                }
            }
            return cpuSeconds;
        }
        finally {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            execute(SOURCE, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
                    + sinkName + "'",
                    "DROP PUBLICATION IF EXISTS " + sinkName);
            Files.deleteIfExists(config);
            Files.deleteIfExists(log);
        }
    }

    private static double processCpuSeconds(long pid)
            throws IOException
    {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / 100.0;
    }

    private void seed(String table, long count)
            throws SQLException
    {
        execute(SOURCE, "CREATE TABLE public." + table + " " + COLUMNS,
                "INSERT INTO public." + table
                        + " SELECT g, (g * 7) % 1000, 'label ' || md5(g::text), (g % 100000) / 100.0, g % 3 = 0,"
                        + " '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 second' FROM generate_series(1, "
                                + count + ") g");
    }

    /** Row count and the sum of every row's md5 (its first 60 bits): equal for equal sets of rows, in any order. */
    private String digest(String database, String table)
            throws SQLException
    {
        try (Connection connection = connect(database); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) || ' rows, md5 sum ' || coalesce(sum(('x' "
                        + "|| substr(md5(t::text), 1, 15))::bit(60)::bigint::numeric), 0)"
                        + " FROM public." + table + " t")) {
            result.next();
            return result.getString(1);
        }
    }

    private void admin(String... sql)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }

    private void execute(String database, String... sql)
            throws SQLException
    {
        try (Connection connection = connect(database); Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }

    private Connection connect(String database)
            throws SQLException
    {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        if (!password.isEmpty()) {
            properties.setProperty("password", password);
        }
        properties.setProperty("ApplicationName", "pgsink-bench");
        return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + database, properties);
    }

    private static List<String> appended(List<String> list, String element)
    {
        List<String> all = new ArrayList<>(list);
        all.add(element);
        return all;
    }

    /** How a method names its {@code initial.load.parallelism}: 0 is the service's default. */
    private static String label(int workers)
    {
        return workers == 0 ? "default" : Integer.toString(workers);
    }
}
