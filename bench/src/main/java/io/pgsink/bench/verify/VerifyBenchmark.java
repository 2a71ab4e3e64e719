package io.pgsink.bench.verify;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.support.CpuTimes;
import io.pgsink.bench.support.LoadAverage;

import org.postgresql.PGConnection;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code pgsink verify} of two equal tables against a plain {@code COPY t TO STDOUT} of the same two
 * tables, one after the other (the cheapest full read a client can do): wall time, client CPU (the
 * verify process, or this JVM's thread for COPY) and server CPU (the whole PostgreSQL process tree,
 * {@link CpuTimes}: other clients of the server count too). The source and target are two databases
 * on one server, each with the same {@code rows}-row table, or, given a {@code target-url} (such as a
 * Greenplum coordinator), the target database on that server. Verify's wall time is given twice: the
 * process's (JVM start included) and the comparison's own, as its summary line reports it; each
 * run's ratio divides the COPY's wall time by verify's, both measured in that run.
 *
 * <pre>
 * ./mvnw -q -pl connector/standalone,bench -am package -DskipTests
 * java -cp bench/target/classes:connector/standalone/target/pgsink.jar \
 *     io.pgsink.bench.verify.VerifyBenchmark [url] [rows] [runs] [target-url]
 * </pre>
 */
public final class VerifyBenchmark
{
    private static final String SOURCE = "pgsink_verify_bench_source";
    private static final String TARGET = "pgsink_verify_bench_target";
    private static final String COLUMNS = "(id bigint PRIMARY KEY, qty int, label text, price numeric(12,2), "
            + "active boolean, updated timestamptz)";

    private VerifyBenchmark() {}

    public static void main(String[] args)
            throws Exception
    {
        String url = args.length > 0
                ? args[0] : System.getenv().getOrDefault("PGSINK_TEST_JDBC_URL",
                "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        long rows = args.length > 1 ? Long.parseLong(args[1]) : 1_000_000;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        String targetUrl = args.length > 3 ? args[3] : url;
        Path jar = Path.of(System.getProperty("pgsink.jar", "connector/standalone/target/pgsink.jar"));
        String loadAverage = LoadAverage.read();
        for (String database : List.of(SOURCE, TARGET)) {
            String server = database.equals(SOURCE) ? url : targetUrl;
            try (Connection admin = DriverManager.getConnection(server);
                    Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + database);
                statement.execute("CREATE DATABASE " + database);
            }
            execute(databaseUrl(server, database), "CREATE TABLE public.t " + COLUMNS,
                    "INSERT INTO public.t SELECT g, g % 1000, 'label ' || md5(g::text), (g % 100000) / "
                            + "100.0, g % 2 = 0, timestamptz '2026-01-01' + g * interval '1 second'"
                            + " FROM generate_series(1, " + rows + ") g",
                    "VACUUM ANALYZE public.t");
        }
        Path config = Files.createTempFile("pgsink-verify-bench", ".properties");
        String user = urlParameter(url, "user");
        String hostPort = url.substring("jdbc:postgresql://".length(), url.indexOf('/', "jdbc:postgresql://".length()));
        Files.write(config, List.of(
                "source.database.hostname=" + hostPort.substring(0, hostPort.indexOf(':')),
                "source.database.port=" + hostPort.substring(hostPort.indexOf(':') + 1),
                "source.database.user=" + user,
                "source.database.dbname=" + SOURCE,
                "source.table.include.list=public\\\\.t",
                "target.url=" + databaseUrl(targetUrl, TARGET).replaceAll("\\?.*", ""),
                "target.user=" + urlParameter(targetUrl, "user"),
                "sink.name=verify_bench"));
        CpuTimes cpu;
        try (BenchmarkDatabase probe = new BenchmarkDatabase(databaseUrl(url, SOURCE), "verify_bench_probe")) {
            cpu = CpuTimes.of(probe);
        }
        List<String> lines = new ArrayList<>();
        lines.add("| run | verify wall s (process / comparison) | verify client CPU s | verify server CPU s "
                + "| COPY TO wall s | COPY client CPU s | COPY server CPU s "
                + "| COPY / verify wall (process / comparison) | verify max RSS MB |");
        lines.add("|---|---|---|---|---|---|---|---|---|");
        for (int run = 1; run <= runs; run++) {
            CpuTimes.Sample start = cpu.sample();
            long begin = System.nanoTime();
            Verified verified = verify(jar, config);
            double wall = (System.nanoTime() - begin) / 1e9;
            double server = CpuTimes.serverSeconds(start, cpu.sample());

            start = cpu.sample();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long clientStart = threads.getCurrentThreadCpuTime();
            long copyBegin = System.nanoTime();
            for (String database : List.of(SOURCE, TARGET)) {
                String copied = database.equals(SOURCE) ? url : targetUrl;
                try (Connection connection = DriverManager.getConnection(databaseUrl(copied, database))) {
                    connection.unwrap(PGConnection.class).getCopyAPI().copyOut("COPY public.t TO STDOUT",
                            OutputStream.nullOutputStream());
                }
            }
            double copyWall = (System.nanoTime() - copyBegin) / 1e9;
            double copyClient = (threads.getCurrentThreadCpuTime() - clientStart) / 1e9;
            double copyServer = CpuTimes.serverSeconds(start, cpu.sample());
            lines.add(String.format(Locale.ROOT,
                    "| %d | %.2f / %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f / %.2f | %d |", run, wall,
                    verified.comparisonSeconds(), verified.cpuSeconds(), server, copyWall, copyClient, copyServer,
                    copyWall / wall, copyWall / verified.comparisonSeconds(), verified.maxResidentMegabytes()));
        }
        System.out.println(rows + " rows per table, " + runs + " runs, load average before: " + loadAverage
                + (targetUrl.equals(url) ? "" : "; target on " + targetUrl.replaceAll("\\?.*", "")
                + ", server CPU is the source server's only"));
        lines.forEach(System.out::println);
        Files.deleteIfExists(config);
        for (String database : List.of(SOURCE, TARGET)) {
            try (Connection admin = DriverManager.getConnection(database.equals(SOURCE) ? url : targetUrl);
                    Statement statement = admin.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + database);
            }
        }
    }

    /**
     * Runs {@code pgsink verify} to its end; returns its CPU seconds (user + system, from {@code /usr/bin/time}),
     * the comparison's own seconds (its summary line's {@code compared in N ms}) and its peak resident set.
     */
    private static Verified verify(Path jar, Path config)
            throws IOException, InterruptedException
    {
        Path times = Files.createTempFile("pgsink-verify-bench", ".time");
        Path log = Files.createTempFile("pgsink-verify-bench", ".log");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process process = new ProcessBuilder("/usr/bin/time", "-o", times.toString(), "-f", "%U %S %M", java, "-jar",
                jar.toString(), "verify", "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(30, TimeUnit.MINUTES) || process.exitValue() != 0) {
            throw new IllegalStateException("pgsink verify failed (exit " + process.exitValue() + "): "
                    + Files.readString(log));
        }
        String[] cpu = Files.readString(times).trim().split("\\s+");
        Matcher compared = Pattern.compile("compared in (\\d+) ms").matcher(Files.readString(log));
        if (!compared.find()) {
            throw new IllegalStateException("pgsink verify printed no summary line: " + Files.readString(log));
        }
        Files.deleteIfExists(times);
        Files.deleteIfExists(log);
        return new Verified(Double.parseDouble(cpu[cpu.length - 3]) + Double.parseDouble(cpu[cpu.length - 2]),
                Long.parseLong(compared.group(1)) / 1e3, Long.parseLong(cpu[cpu.length - 1]) / 1024);
    }

    /** @param maxResidentMegabytes the verify process's peak resident set (JVM included) */
    private record Verified(double cpuSeconds, double comparisonSeconds, long maxResidentMegabytes) {}

    private static String databaseUrl(String url, String database)
    {
        int slash = url.indexOf('/', "jdbc:postgresql://".length());
        int query = url.indexOf('?');
        return url.substring(0, slash + 1) + database + (query < 0 ? "" : url.substring(query));
    }

    private static String urlParameter(String url, String name)
    {
        int query = url.indexOf('?');
        if (query >= 0) {
            for (String parameter : url.substring(query + 1).split("&")) {
                if (parameter.startsWith(name + "=")) {
                    return parameter.substring(name.length() + 1);
                }
            }
        }
        return "postgres";
    }

    private static void execute(String url, String... sql)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }
}
