package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;

import io.pgsink.connector.standalone.demo.DemoWorkload;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once in effect, under SIGKILL: the service runs as its own JVM (the runnable jar) while a
 * workload changes the source; it is killed with SIGKILL and restarted, again and again; at the end
 * the target must equal the source, with nothing lost and nothing applied twice.
 *
 * <p>The kill moments are taken from the progress the test observes, never from the clock alone,
 * so that a slow (busy) machine moves them with the service rather than before it: the first run
 * is killed during or right after the initial load (once the target holds part of the seeded rows); later
 * runs cycle through "while starting up" (the JVM has logged, no position stored by this run yet),
 * "after n stored positions" (the offsets row changed n times) and "during a flush" (a few
 * milliseconds after a stored position changed, while the next batch is being applied). Every
 * moment but the first two is after a stored position, so later starts must resume from one.
 *
 * <p>{@code -Dpgsink.crash.kills=N} (or {@code PGSINK_CRASH_KILLS}) sets the number of kills,
 * {@code -Dpgsink.crash.seed=S} replays a run; {@code src/test/scripts/crash-test.sh} runs it 50
 * times.
 */
abstract class AbstractCrashRecoveryTest
{
    // generous: only a stuck run waits this long, and a machine shared with other builds can be 10x slower than an idle one
    private static final Duration PROGRESS_TIMEOUT = Duration.ofMinutes(5);
    private static final String SECRET = "pgsink-crash-test-secret-" + Long.toHexString(System.nanoTime());

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("crash", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    /** Settings a subclass adds to the service's configuration, e.g. {@code flush.pipelined}. */
    protected Map<String, String> extraProperties()
    {
        return Map.of();
    }

    @Test
    void targetEqualsSourceAfterRepeatedKills(@TempDir Path directory)
            throws Exception
    {
        int kills = Integer.parseInt(System.getProperty("pgsink.crash.kills", System.getenv().getOrDefault("PGSINK_CRASH_KILLS", "10")));
        long seed = Long.parseLong(System.getProperty("pgsink.crash.seed", Long.toString(System.nanoTime())));
        Random random = new Random(seed);
        System.out.println("CrashRecoveryIT: " + kills + " kills, seed " + seed);

        source.execute(DemoWorkload.CREATE_TABLE, DemoWorkload.SOURCE_REPLICA_IDENTITY);
        target.execute(DemoWorkload.CREATE_TABLE);
        try (Connection connection = source.connect()) {
            // enough rows that the snapshot takes a while: kills land in it too
            new DemoWorkload(connection, seed).seed(30_000);
        }
        String sinkName = pipeline.sinkName();
        Path config = writeConfig(directory);
        // kept in the build directory when the test fails: the child JVM's log is the evidence
        Path log = Path.of(System.getenv().getOrDefault("PGSINK_TEST_BUILD_DIRECTORY", directory.toString())).resolve("crash-test-" + seed + ".log");
        Files.deleteIfExists(log);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        Thread workload = new Thread(() -> {
            try (Connection connection = source.connect()) {
                DemoWorkload demo = new DemoWorkload(connection, seed + 1);
                while (!stop.get()) {
                    demo.runTransaction();
                    Thread.sleep(5);
                }
            }
            catch (Throwable e) {
                workloadFailure.set(e);
            }
        }, "crash-test-workload");
        workload.start();
        try {
            String stored = storedPosition(sinkName);
            for (int kill = 1; kill <= kills; kill++) {
                long logged = Files.exists(log) ? Files.size(log) : 0;
                Process process = ServiceProcess.start(config, log);
                Moment moment = kill == 1 ? Moment.DURING_SNAPSHOT : Moment.values()[1 + random.nextInt(Moment.values().length - 1)];
                String reached = switch (moment) {
                    case DURING_SNAPSHOT -> {
                        // the initial load commits the 30,000 seeded rows chunk by chunk: kill it once some are in
                        long rows = 1 + random.nextInt(20_000);
                        ServiceProcess.awaitProgress(process, log, "the snapshot to copy " + rows + " rows", PROGRESS_TIMEOUT, () -> assertThat(targetRows()).isGreaterThanOrEqualTo(rows));
                        yield "after the target held " + targetRows() + " snapshot rows";
                    }
                    case STARTING -> {
                        ServiceProcess.awaitProgress(process, log, "the JVM to start logging", PROGRESS_TIMEOUT, () -> assertThat(Files.exists(log) ? Files.size(log) : 0).isGreaterThan(logged));
                        yield "while starting";
                    }
                    case AFTER_STORED_POSITIONS -> {
                        int positions = 1 + random.nextInt(5);
                        String from = stored;
                        for (int i = 0; i < positions; i++) {
                            from = awaitNewPosition(process, log, sinkName, from);
                        }
                        yield "after " + positions + " stored positions";
                    }
                    case DURING_FLUSH -> {
                        awaitNewPosition(process, log, sinkName, stored);
                        // flushes come every 50 ms under the workload: a few ms after a commit the next one is underway
                        long delay = random.nextInt(40);
                        Thread.sleep(delay);
                        yield delay + " ms after a stored position";
                    }
                };
                assertThat(process.isAlive()).as("pgsink exited by itself before kill %s; log:\n%s", kill, ServiceProcess.tail(log)).isTrue();
                process.destroyForcibly();
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                stored = storedPosition(sinkName);
                System.out.println("CrashRecoveryIT: kill " + kill + " of " + kills + " " + reached);
                assertThat(workloadFailure.get()).isNull();
            }
        }
        finally {
            stop.set(true);
            workload.join();
        }
        assertThat(workloadFailure.get()).isNull();

        Process last = ServiceProcess.start(config, log);
        try {
            RunningService.await("the target to equal the source", Duration.ofSeconds(180), () -> {
                assertThat(last.isAlive()).as("pgsink is running; log:\n%s", ServiceProcess.tail(log)).isTrue();
                try (Connection sourceConnection = source.connect(); Connection targetConnection = target.connect()) {
                    assertThat(DemoWorkload.checksum(targetConnection)).as(() -> "seed " + seed + "; rows that differ: " + differences()).isEqualTo(DemoWorkload.checksum(sourceConnection));
                }
            });
        }
        finally {
            // SIGTERM: the shutdown hook stops the service cleanly
            last.destroy();
            if (!last.waitFor(60, TimeUnit.SECONDS)) {
                last.destroyForcibly();
            }
        }
        String output = Files.readString(log);
        assertThat(output).doesNotContain(SECRET);
        assertThat(output).contains("resuming from the position stored in the target");
        Files.delete(log);
    }

    /** When a run is killed, relative to what the test saw it do. */
    private enum Moment
    {
        DURING_SNAPSHOT,
        STARTING,
        AFTER_STORED_POSITIONS,
        DURING_FLUSH,
    }

    /** Waits until the target stores a position other than {@code previous}, and returns it. */
    private String awaitNewPosition(Process process, Path log, String sinkName, @Nullable String previous)
            throws Exception
    {
        AtomicReference<String> position = new AtomicReference<>();
        ServiceProcess.awaitProgress(process, log, "a new stored position", PROGRESS_TIMEOUT, () -> {
            String current = storedPosition(sinkName);
            assertThat(current).isNotNull().isNotEqualTo(previous);
            position.set(current);
        });
        return position.get();
    }

    /** The position the sink stored in the target, or null before the first. */
    @Nullable
    private String storedPosition(String sinkName)
            throws SQLException
    {
        try (Connection connection = target.connect(); PreparedStatement statement = connection.prepareStatement(
                "SELECT string_agg(source_offset, ',' ORDER BY source_partition) FROM public.pgsink_offsets WHERE sink_name = ?")) {
            statement.setString(1, sinkName);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getString(1) : null;
            }
        }
        catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                // the offsets table is created by the first run's first connection
                return null;
            }
            throw e;
        }
    }

    private long targetRows()
            throws SQLException
    {
        try (Connection connection = target.connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT count(*) FROM public.orders")) {
            rows.next();
            return rows.getLong(1);
        }
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public.orders");
        // the test server trusts local connections, so the passwords are never used, only (not) logged
        properties.put("source.database.password", SECRET);
        properties.put("target.password", SECRET);
        // small, frequent flushes: more commits to be killed in the middle of
        properties.put("flush.interval.ms", "50");
        properties.put("flush.max.events", "700");
        properties.put("progress.interval.ms", "1000");
        properties.putAll(extraProperties());
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        return file;
    }

    /** Up to ten keys whose rows differ between source and target, with both rows' text (test data), to tell a lost change from a doubled one. */
    private String differences()
    {
        try {
            return differingRows();
        }
        catch (SQLException e) {
            return "(cannot read them: " + e.getMessage() + ")";
        }
    }

    private String differingRows()
            throws SQLException
    {
        String rows = "SELECT t.id, t::text FROM public.orders t ORDER BY t.id";
        Map<String, String> sourceRows = new TreeMap<>();
        source.query(rows).forEach(row -> sourceRows.put(row.get(0), row.get(1)));
        Map<String, String> targetRows = new TreeMap<>();
        target.query(rows).forEach(row -> targetRows.put(row.get(0), row.get(1)));
        List<String> differing = new ArrayList<>();
        Set<String> keys = new TreeSet<>(sourceRows.keySet());
        keys.addAll(targetRows.keySet());
        for (String key : keys) {
            if (!Objects.equals(sourceRows.get(key), targetRows.get(key)) && differing.size() < 10) {
                differing.add("id " + key + ": source " + sourceRows.get(key) + ", target " + targetRows.get(key));
            }
        }
        return differing.toString();
    }
}
