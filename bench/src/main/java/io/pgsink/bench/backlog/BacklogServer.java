package io.pgsink.bench.backlog;

import io.pgsink.bench.backlog.BacklogBenchmark.Backlog;
import io.pgsink.bench.backlog.BacklogBenchmark.CaseRun;
import io.pgsink.bench.backlog.BacklogBenchmark.SteadyRun;
import io.pgsink.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.net.URI;
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
import java.util.concurrent.TimeUnit;

import static io.pgsink.bench.backlog.BacklogBenchmark.PUBLICATION;
import static io.pgsink.bench.backlog.BacklogBenchmark.SINK_NAME;
import static io.pgsink.bench.backlog.BacklogBenchmark.SOURCE_DATABASE;
import static io.pgsink.bench.backlog.BacklogBenchmark.TARGET_DATABASE;
import static io.pgsink.bench.backlog.BacklogBenchmark.TEMPLATE_SLOT;

/** The server: source and target databases, the backlog, a slot per case. */
final class BacklogServer
{
    private final String url;
    /** The server as the cases' sinks reach it: {@code url}, or the latency relay in front of it. */
    private final String targetServerUrl;
    private final List<String> tables;

    BacklogServer(String url, String targetServerUrl, List<String> tables)
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
        return CaseProcess.start(input, slot, jvmArgs);
    }

    /** Waits for a case's JVM to end and reads what it measured; drops its slot. */
    private CaseRun finish(String name, int run, CaseProcess started)
            throws IOException, InterruptedException, SQLException
    {
        Properties output = started.await(name);
        dropSlot(started.slot());
        return CaseRun.of(name, run, started.spawnedMillis(), output);
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
