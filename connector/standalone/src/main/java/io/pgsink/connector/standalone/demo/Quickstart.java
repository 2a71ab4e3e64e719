package io.pgsink.connector.standalone.demo;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.service.StandaloneService;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.embedded.EmbeddedPostgres;
import org.jetbrains.annotations.Nullable;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.Objects.requireNonNull;

/**
 * {@code pgsink quickstart}: the whole product in one command, with nothing to set up. It uses the
 * PostgreSQL on localhost:5432 when one answers with {@code wal_level=logical} (user
 * {@code $PGUSER}, default {@code postgres}, password {@code $PGPASSWORD}), otherwise a throwaway
 * PostgreSQL ({@link EmbeddedPostgres}); creates a source and a target database with a demo
 * table; starts the standalone service between them; runs a live workload on the source while
 * printing progress; and ends by comparing the target with the source: {@code PASS} or
 * {@code FAIL}. Everything it created (databases, replication slot, publication, server) is
 * removed at the end.
 */
public final class Quickstart
{
    public record Options(int durationSeconds, int transactionsPerSecond, boolean forceEmbedded, boolean keep) {}

    private final Options options;
    private final PrintWriter out;

    public Quickstart(Options options, PrintWriter out)
    {
        this.options = requireNonNull(options, "options is null");
        this.out = requireNonNull(out, "out is null");
    }

    /** Runs the demo; returns whether the target ended equal to the source. */
    public boolean run()
            throws Exception
    {
        Server server = null;
        EmbeddedPostgres throwaway = null;
        if (!options.forceEmbedded()) {
            server = localServer();
        }
        if (server == null) {
            say("starting a throwaway PostgreSQL (wal_level=logical) from the embedded binaries...");
            throwaway = EmbeddedPostgres.start();
            server = new Server("127.0.0.1", throwaway.port(), "postgres", null);
            say("throwaway PostgreSQL is up on 127.0.0.1:" + throwaway.port());
        }
        try {
            return demo(server);
        }
        finally {
            if (throwaway != null) {
                throwaway.close();
            }
        }
    }

    private @Nullable Server localServer()
    {
        String user = environment("PGUSER", "postgres");
        String password = System.getenv("PGPASSWORD");
        Server local = new Server("localhost", 5432, user, password);
        try (Connection connection = local.connect("postgres"); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT current_setting('wal_level'), "
                        + "current_setting('server_version'), r.rolsuper FROM pg_roles r WHERE r.rolname = "
                        + "current_user")) {
            rows.next();
            if (!rows.getString(1).equals("logical")) {
                say("the PostgreSQL on localhost:5432 has wal_level=" + rows.getString(1)
                        + " (logical decoding needs logical); using a throwaway one instead");
                return null;
            }
            if (!rows.getBoolean(3)) {
                say("user " + user + " on localhost:5432 is not a superuser (the demo creates databases and a "
                        + "replication slot); using a throwaway PostgreSQL instead");
                return null;
            }
            say("using the PostgreSQL " + rows.getString(2) + " on localhost:5432 (user " + user
                    + ", wal_level=logical)");
            return local;
        }
        catch (SQLException e) {
            say("no usable PostgreSQL on localhost:5432 (" + e.getMessage() + "); using a throwaway one instead");
            return null;
        }
    }

    private boolean demo(Server server)
            throws Exception
    {
        String suffix = Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36).substring(0,
                6).toLowerCase(Locale.ROOT);
        String sourceDatabase = "pgsink_demo_source_" + suffix;
        String targetDatabase = "pgsink_demo_target_" + suffix;
        String sinkName = "pgsink_demo_" + suffix;
        try (Connection admin = server.connect("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("CREATE DATABASE " + sourceDatabase);
            statement.execute("CREATE DATABASE " + targetDatabase);
        }
        say("created databases " + sourceDatabase + " (source) and " + targetDatabase
                + " (target), each with table public.orders");
        try {
            return stream(server, sourceDatabase, targetDatabase, sinkName);
        }
        finally {
            cleanUp(server, sourceDatabase, targetDatabase, sinkName);
        }
    }

    private boolean stream(Server server, String sourceDatabase, String targetDatabase, String sinkName)
            throws Exception
    {
        try (Connection source = server.connect(sourceDatabase); Connection target = server.connect(targetDatabase);
                Statement sourceStatement = source.createStatement(); Statement targetStatement =
                        target.createStatement()) {
            sourceStatement.execute(DemoWorkload.CREATE_TABLE);
            sourceStatement.execute(DemoWorkload.SOURCE_REPLICA_IDENTITY);
            targetStatement.execute(DemoWorkload.CREATE_TABLE);
        }
        DemoWorkload workload;
        Connection workloadConnection = server.connect(sourceDatabase);
        try {
            workload = new DemoWorkload(workloadConnection, 42);
            workload.seed(1000);
            say("seeded the source with 1000 orders (pgsink copies them with its initial load, COPY to COPY at the "
                    + "replication slot's snapshot)");

            StandaloneConfig config = StandaloneConfig.parse(configuration(server, sourceDatabase, targetDatabase,
                    sinkName));
            StandaloneService service = new StandaloneService(config);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread runner = new Thread(() -> {
                try {
                    service.run();
                }
                catch (Throwable e) {
                    failure.set(e);
                }
            }, "pgsink-quickstart-service");
            runner.start();
            try {
                waitForHttp(service);
                long loadStart = System.nanoTime();
                while (service.state() != ServiceState.State.STREAMING && failure.get() == null && runner.isAlive()) {
                    Thread.sleep(20);
                }
                say(String.format(Locale.ROOT,
                        "initial load: %,d rows copied in %.1f s (COPY to COPY, at the slot's snapshot); streaming "
                        + "from there",
                        service.metrics().initialLoadRowsTotal(), (System.nanoTime() - loadStart) / 1e9));
                say("pgsink is streaming; metrics at http://127.0.0.1:" + service.httpPort()
                        + "/metrics, health at /health");
                say("running a live workload on the source for " + options.durationSeconds() + " s ("
                        + options.transactionsPerSecond()
                        + " transactions/s: inserts, updates, deletes, key changes, large TOASTed values)");
                runWorkload(workload, service, failure);
                say("workload done: " + workload.changes() + " changes in " + workload.transactions()
                        + " transactions; waiting for the target to catch up...");
                return compare(server, sourceDatabase, targetDatabase, service, failure);
            }
            finally {
                service.close();
                runner.join(TimeUnit.SECONDS.toMillis(60));
            }
        }
        finally {
            workloadConnection.close();
        }
    }

    private Map<String, String> configuration(Server server, String sourceDatabase, String targetDatabase,
            String sinkName)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("source.database.hostname", server.host());
        properties.put("source.database.port", Integer.toString(server.port()));
        properties.put("source.database.user", server.user());
        if (server.password() != null) {
            properties.put("source.database.password", server.password());
            properties.put(SinkConfig.TARGET_PASSWORD, server.password());
        }
        properties.put("source.database.dbname", sourceDatabase);
        properties.put("source.table.include.list", "public.orders");
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put(SinkConfig.SINK_NAME, sinkName);
        properties.put(SinkConfig.TARGET_URL,
                "jdbc:postgresql://" + server.host() + ":" + server.port() + "/" + targetDatabase);
        properties.put(SinkConfig.TARGET_USER, server.user());
        properties.put(SinkConfig.FLUSH_INTERVAL_MS, "200");
        properties.put(StandaloneConfig.HTTP_PORT, "0");
        properties.put(StandaloneConfig.HTTP_HOST, "127.0.0.1");
        properties.put(StandaloneConfig.PROGRESS_INTERVAL_MS, "0");
        return properties;
    }

    private void runWorkload(DemoWorkload workload, StandaloneService service, AtomicReference<Throwable> failure)
            throws SQLException, InterruptedException
    {
        long start = System.nanoTime();
        long end = start + TimeUnit.SECONDS.toNanos(options.durationSeconds());
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) / Math.max(1, options.transactionsPerSecond());
        long next = start;
        long nextReport = start + TimeUnit.SECONDS.toNanos(1);
        while (System.nanoTime() < end && failure.get() == null) {
            workload.runTransaction();
            next += intervalNanos;
            long now = System.nanoTime();
            if (now >= nextReport) {
                report(TimeUnit.NANOSECONDS.toSeconds(now - start), workload, service);
                nextReport += TimeUnit.SECONDS.toNanos(1);
            }
            long sleep = next - System.nanoTime();
            if (sleep > 0) {
                TimeUnit.NANOSECONDS.sleep(sleep);
            }
        }
    }

    private void report(long seconds, DemoWorkload workload, StandaloneService service)
    {
        SinkMetrics metrics = service.metrics();
        say(String.format(Locale.ROOT,
                "%4d s | source: %,d changes in %,d transactions | pgsink: %,d events in, %,d rows applied in %,d "
                + "flushes, lag %.1f s",
                seconds, workload.changes(), workload.transactions(), metrics.eventsInTotal(),
                        metrics.rowsAppliedTotal(), metrics.flushCount(), metrics.lagSeconds()));
    }

    private boolean compare(Server server, String sourceDatabase, String targetDatabase, StandaloneService service,
            AtomicReference<Throwable> failure)
            throws SQLException, InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        String sourceChecksum;
        try (Connection source = server.connect(sourceDatabase)) {
            sourceChecksum = DemoWorkload.checksum(source);
        }
        String targetChecksum = "";
        try (Connection target = server.connect(targetDatabase)) {
            while (System.nanoTime() < deadline && failure.get() == null) {
                targetChecksum = DemoWorkload.checksum(target);
                if (targetChecksum.equals(sourceChecksum)) {
                    SinkMetrics metrics = service.metrics();
                    say(String.format(Locale.ROOT,
                            "pgsink applied %,d events as %,d merged rows in %,d flushes (mean %.0f ms), %,d bytes "
                            + "copied",
                            metrics.eventsInTotal(), metrics.rowsAppliedTotal(), metrics.flushCount(),
                                    metrics.flushMeanMillis(), metrics.copyBytesTotal()));
                    out.println("PASS: target equals source (" + sourceChecksum + ")");
                    out.flush();
                    return true;
                }
                Thread.sleep(500);
            }
        }
        Throwable error = failure.get();
        out.println("FAIL: target differs from source (source " + sourceChecksum + ", target " + targetChecksum + ")"
                + (error == null ? "" : ": pgsink stopped: " + error.getMessage()));
        out.flush();
        return false;
    }

    private static void waitForHttp(StandaloneService service)
            throws InterruptedException
    {
        for (int i = 0; i < 200 && service.httpPort() < 0; i++) {
            Thread.sleep(50);
        }
    }

    private void cleanUp(Server server, String sourceDatabase, String targetDatabase, String sinkName)
    {
        String slot = StandaloneConfig.identifier(sinkName);
        try (Connection source = server.connect(sourceDatabase)) {
            dropSlot(source, slot);
            try (Statement statement = source.createStatement()) {
                statement.execute("DROP PUBLICATION IF EXISTS " + slot);
            }
        }
        catch (SQLException e) {
            say("could not drop replication slot " + slot + ": " + e.getMessage()
                    + " (drop it with SELECT pg_drop_replication_slot('" + slot + "'))");
        }
        if (options.keep()) {
            say("kept databases " + sourceDatabase + " and " + targetDatabase + " (--keep)");
            return;
        }
        try (Connection admin = server.connect("postgres"); Statement statement = admin.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + sourceDatabase);
            statement.execute("DROP DATABASE IF EXISTS " + targetDatabase);
        }
        catch (SQLException e) {
            say("could not drop the demo databases: " + e.getMessage());
        }
    }

    /** Drops a replication slot once its walsender has let go of it. */
    public static void dropSlot(Connection connection, String slot)
            throws SQLException
    {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (PreparedStatement statement = connection.prepareStatement(
                    "SELECT active_pid, pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = "
                            + "? AND active_pid IS NOT NULL")) {
                statement.setString(1, slot);
                try (ResultSet rows = statement.executeQuery()) {
                    if (!rows.next()) {
                        break;
                    }
                }
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                + "WHERE slot_name = ?")) {
            statement.setString(1, slot);
            statement.execute();
        }
    }

    private void say(String message)
    {
        out.println("pgsink quickstart: " + message);
        out.flush();
    }

    private static String environment(String name, String fallback)
    {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }

    private record Server(String host, int port, String user, @Nullable String password)
    {
        Connection connect(String database)
                throws SQLException
        {
            Properties properties = new Properties();
            properties.setProperty("user", user);
            if (password != null) {
                properties.setProperty("password", password);
            }
            properties.setProperty("connectTimeout", "5");
            properties.setProperty("ApplicationName", "pgsink quickstart");
            return DriverManager.getConnection("jdbc:postgresql://" + host + ":" + port + "/" + database, properties);
        }
    }
}
