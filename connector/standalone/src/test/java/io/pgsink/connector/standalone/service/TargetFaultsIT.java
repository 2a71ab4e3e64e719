package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.demo.DemoWorkload;
import io.pgsink.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Target faults while the source changes: the sink's target connections are killed
 * ({@code pg_terminate_backend}), preferably while a flush runs, and the target server is restarted,
 * each time after the sink applied one to three more flushes (moments that follow the sink's
 * progress, so a busy machine slows the faults with it); each fault at least 10 times ({@code -Dpgsink.faults=N}). The service must
 * retry with backoff, keep running, and end with the target equal to the source (row count and md5
 * of every row in key order).
 *
 * <p>The restarts hit a private PostgreSQL ({@link EmbeddedPostgres}, from the embedded binaries on
 * a free port), not the shared test server other tests use.
 */
class TargetFaultsIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(180);
    private static final Pattern FLUSH_FAILURES = Pattern.compile("(?m)^pgsink_flush_failures_total\\{[^}]*} ([0-9.]+)");

    private final int faults = Integer.parseInt(System.getProperty("pgsink.faults", "10"));
    private final long seed = Long.parseLong(System.getProperty("pgsink.faults.seed", Long.toString(System.nanoTime())));
    private final Random random = new Random(seed);
    private TestingDatabase source;
    private String applicationName;

    @BeforeEach
    void createSource()
            throws Exception
    {
        source = TestingDatabase.create("pgsink_faults_source");
        source.execute(DemoWorkload.CREATE_TABLE, DemoWorkload.SOURCE_REPLICA_IDENTITY);
        try (Connection connection = source.connect()) {
            new DemoWorkload(connection, seed).seed(5_000);
        }
        applicationName = TestingDatabase.randomName("pgsink-faults");
    }

    @AfterEach
    void dropSource()
            throws Exception
    {
        source.close();
        assertThat(source.replicationSlots()).isEmpty();
    }

    private Map<String, String> configuration(Map<String, String> target)
    {
        Map<String, String> properties = new HashMap<>(source.sourceProperties());
        properties.putAll(target);
        properties.put("source.table.include.list", "public.orders");
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", TestingDatabase.randomName("faults"));
        // small, frequent flushes: more of them to be cut in the middle
        properties.put("flush.interval.ms", "50");
        properties.put("flush.max.events", "500");
        properties.put("retry.backoff.max.ms", "2000");
        properties.put("http.port", "-1");
        properties.put("progress.interval.ms", "5000");
        properties.put("target.jdbc.ApplicationName", applicationName);
        properties.putAll(extraProperties());
        return properties;
    }

    /** Settings a subclass adds to the service's configuration, e.g. {@code flush.pipelined}. */
    protected Map<String, String> extraProperties()
    {
        return Map.of();
    }

    @Test
    void survivesTargetConnectionsKilledDuringFlushes()
            throws Exception
    {
        System.out.println("TargetFaultsIT: " + faults + " connection kills, seed " + seed);
        try (TestingDatabase target = TestingDatabase.createTarget("pgsink_faults_target")) {
            target.execute(DemoWorkload.CREATE_TABLE);
            int killedMidFlush = 0;
            try (RunningService running = RunningService.start(configuration(target.targetProperties()));
                    Workload workload = Workload.start(source, seed + 1);
                    Connection killer = target.connect()) {
                awaitConnection(running, target);
                for (int kill = 1; kill <= faults; kill++) {
                    // the next kill after one to three more applied flushes: the moment follows the sink's progress
                    awaitFlushes(running, 1 + random.nextInt(3));
                    // prefer a moment when the sink's connection runs a statement: inside a flush
                    boolean active = false;
                    int terminated = 0;
                    long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
                    while (terminated == 0 && System.nanoTime() < deadline) {
                        terminated = terminate(killer, "AND state <> 'idle'");
                        active = terminated > 0;
                    }
                    if (terminated == 0) {
                        terminated = terminate(killer, "");
                    }
                    if (terminated == 0) {
                        // between a failure and the reconnect: wait for the sink to be back, then cut it
                        awaitConnection(running, target);
                        terminated = terminate(killer, "");
                    }
                    assertThat(terminated).as("kill %s: a connection of the sink to terminate", kill).isPositive();
                    killedMidFlush += active ? 1 : 0;
                    workload.assertRunning();
                    running.assertRunning();
                }
                workload.stop();
                awaitEqual(running, target.connect(), "connection kills");
                System.out.println("TargetFaultsIT: " + faults + " kills, " + killedMidFlush + " of them inside a statement, "
                        + flushFailures(running) + " flushes failed and were retried, " + workload.demo.changes() + " source changes");
                assertThat(flushFailures(running)).as("kills inside flushes fail flushes, which are retried").isPositive();
            }
            assertThat(killedMidFlush).as("kills that hit a running statement").isPositive();
        }
    }

    @Test
    void survivesTargetServerRestarts()
            throws Exception
    {
        System.out.println("TargetFaultsIT: " + faults + " target restarts, seed " + seed);
        try (EmbeddedPostgres server = EmbeddedPostgres.start()) {
            String url = server.jdbcUrl("postgres");
            try (Connection connection = DriverManager.getConnection(url, "postgres", ""); Statement statement = connection.createStatement()) {
                statement.execute(DemoWorkload.CREATE_TABLE);
            }
            try (RunningService running = RunningService.start(configuration(Map.of("target.url", url, "target.user", "postgres")));
                    Workload workload = Workload.start(source, seed + 1)) {
                for (int restart = 1; restart <= faults; restart++) {
                    // the next restart once the sink is back and applied one to three more flushes
                    awaitFlushes(running, 1 + random.nextInt(3));
                    server.restart();
                    workload.assertRunning();
                    running.assertRunning();
                }
                workload.stop();
                awaitEqual(running, DriverManager.getConnection(url, "postgres", ""), "target restarts");
                System.out.println("TargetFaultsIT: " + faults + " restarts, " + flushFailures(running) + " flushes failed and were retried, "
                        + workload.demo.changes() + " source changes");
            }
        }
    }

    private void awaitEqual(RunningService running, Connection targetConnection, String after)
            throws Exception
    {
        try (Connection target = targetConnection; Connection sourceConnection = source.connect()) {
            String expected = DemoWorkload.checksum(sourceConnection);
            RunningService.await("the target to equal the source after " + faults + " " + after + " (seed " + seed + ")", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(DemoWorkload.checksum(target)).isEqualTo(expected);
            });
        }
    }

    /** Waits until the sink has applied {@code flushes} more flushes (the workload keeps them coming). */
    private static void awaitFlushes(RunningService running, int flushes)
    {
        long until = running.service().metrics().flushCount() + flushes;
        RunningService.await(flushes + " more applied flushes", CATCH_UP, () -> {
            running.assertRunning();
            assertThat(running.service().metrics().flushCount()).isGreaterThanOrEqualTo(until);
        });
    }

    private void awaitConnection(RunningService running, TestingDatabase target)
            throws Exception
    {
        RunningService.await("the sink to connect to the target", CATCH_UP, () -> {
            running.assertRunning();
            assertThat(target.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + applicationName + "'")).isNotEqualTo(List.of(List.of("0")));
        });
    }

    /** Terminates the sink's target connections matching {@code condition}; returns how many. */
    private int terminate(Connection connection, String condition)
            throws Exception
    {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                        + " WHERE application_name = '" + applicationName + "' AND pid <> pg_backend_pid() " + condition)) {
            rows.next();
            return rows.getInt(1);
        }
    }

    private static double flushFailures(RunningService running)
    {
        Matcher matcher = FLUSH_FAILURES.matcher(running.service().metrics().scrape());
        return matcher.find() ? Double.parseDouble(matcher.group(1)) : 0;
    }

    /** {@link DemoWorkload} transactions on the source, on their own thread, until stopped. */
    private static final class Workload
            implements AutoCloseable
    {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Connection connection;
        private final DemoWorkload demo;
        private final Thread thread;

        private Workload(Connection connection, long seed)
                throws Exception
        {
            this.connection = connection;
            this.demo = new DemoWorkload(connection, seed);
            this.thread = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        demo.runTransaction();
                        Thread.sleep(2);
                    }
                }
                catch (Throwable e) {
                    failure.set(e);
                }
            }, "faults-test-workload");
        }

        static Workload start(TestingDatabase source, long seed)
                throws Exception
        {
            Workload workload = new Workload(source.connect(), seed);
            workload.thread.start();
            return workload;
        }

        void assertRunning()
        {
            assertThat(failure.get()).as("the source workload failed").isNull();
        }

        void stop()
                throws Exception
        {
            stop.set(true);
            thread.join();
            assertRunning();
        }

        @Override
        public void close()
                throws Exception
        {
            stop.set(true);
            thread.join();
            connection.close();
        }
    }
}
