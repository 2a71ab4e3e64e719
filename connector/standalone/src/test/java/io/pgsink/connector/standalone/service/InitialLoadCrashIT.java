package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;

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
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The initial load under SIGKILL: the service runs as its own JVM while a workload changes four
 * keyed tables and appends to a keyless one; it is killed in the middle of the load (after a
 * random number of chunks the progress table recorded), again in the middle of the resumed load,
 * and once more while streaming after it; the last run must end with every target table equal to
 * its source table (count and md5 of the rows) and no appended row twice.
 *
 * <p>Kill moments come from the progress the test observes in the target (chunk rows committed
 * since the run started, the load's completion row, a stored stream position), never from the
 * clock. {@code -Dpgsink.crash.seed=S} replays a run's choices.
 */
class InitialLoadCrashIT
{
    private static final Duration PROGRESS_TIMEOUT = Duration.ofMinutes(5);
    private static final List<String> KEYED = List.of("alpha", "beta", "gamma", "delta");
    private static final int ROWS = 150_000;

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("loadcrash");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    @Test
    void targetEqualsSourceAfterKillsDuringTheLoad(@TempDir Path directory)
            throws Exception
    {
        long seed = Long.parseLong(System.getProperty("pgsink.crash.seed", Long.toString(System.nanoTime())));
        Random random = new Random(seed);
        System.out.println("InitialLoadCrashIT: seed " + seed);
        for (String table : KEYED) {
            source.execute("CREATE TABLE public." + table + " (id bigint PRIMARY KEY, qty int, label text, price numeric(12,2), updated timestamptz)",
                    "INSERT INTO public." + table + " SELECT g, g % 1000, 'row ' || g, g / 3.0, '2024-01-01'::timestamptz + g * interval '1 second' FROM generate_series(1, " + ROWS + ") g");
        }
        source.execute("CREATE TABLE public.appended (seq bigint, note text)", "INSERT INTO public.appended SELECT g, 'seeded' FROM generate_series(1, 20000) g");
        Path config = writeConfig(directory);
        Path log = directory.resolve("load-crash-" + seed + ".log");

        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        Thread workload = new Thread(() -> runWorkload(stop, workloadFailure, seed), "load-crash-workload");
        workload.start();
        try {
            // 1: during the first load, after some chunks
            Process first = ServiceProcess.start(config, log);
            int chunks = 1 + random.nextInt(12);
            awaitChunksSince(first, log, epoch(), chunks);
            kill(first, "after " + chunks + " chunks of the first load");
            assertThat(loadComplete()).as("the load was still running when killed").isFalse();

            // 2: during the resumed load
            Timestamp restarted = targetNow();
            Process second = ServiceProcess.start(config, log);
            int resumedChunks = 1 + random.nextInt(6);
            awaitChunksSince(second, log, restarted, resumedChunks);
            kill(second, "after " + resumedChunks + " chunks of the resumed load");

            // 3: while streaming after the load
            Process third = ServiceProcess.start(config, log);
            ServiceProcess.awaitProgress(third, log, "the load to complete and a stream position to be stored", PROGRESS_TIMEOUT, () -> {
                assertThat(loadComplete()).isTrue();
                assertThat(target.query("SELECT count(*) FROM public.pgsink_offsets WHERE sink_name = '" + sinkName + "'")).isNotEqualTo(List.of(List.of("0")));
            });
            kill(third, "while streaming after the load");
        }
        finally {
            stop.set(true);
            workload.join();
        }
        assertThat(workloadFailure.get()).isNull();

        Process last = ServiceProcess.start(config, log);
        try {
            for (String table : appendAll(KEYED, "appended")) {
                RunningService.await("target " + table + " to equal the source", Duration.ofSeconds(180), () -> {
                    assertThat(last.isAlive()).as("pgsink is running; log:\n%s", ServiceProcess.tail(log)).isTrue();
                    assertThat(digest(target, table)).isEqualTo(digest(source, table));
                });
            }
        }
        finally {
            last.destroy();
            if (!last.waitFor(60, TimeUnit.SECONDS)) {
                last.destroyForcibly();
            }
        }
        assertThat(target.query("SELECT count(*) FROM (SELECT seq FROM public.appended GROUP BY seq HAVING count(*) > 1) d")).containsExactly(List.of("0"));
        assertThat(Files.readString(log)).contains("resuming the initial load");
    }

    private void runWorkload(AtomicBoolean stop, AtomicReference<Throwable> failure, long seed)
    {
        Random random = new Random(seed + 1);
        try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            long next = 1_000_000;
            while (!stop.get()) {
                String table = KEYED.get(random.nextInt(KEYED.size()));
                long id = 1 + random.nextInt(ROWS);
                statement.execute("UPDATE public." + table + " SET qty = qty + 1, updated = now() WHERE id = " + id);
                statement.execute("DELETE FROM public." + table + " WHERE id = " + (1 + random.nextInt(ROWS)));
                statement.execute("INSERT INTO public." + table + " VALUES (" + next + ", 1, 'live', 1.50, now())");
                statement.execute("INSERT INTO public.appended VALUES (" + next++ + ", 'live')");
                connection.commit();
                Thread.sleep(2);
            }
        }
        catch (Throwable e) {
            failure.set(e);
        }
    }

    private static List<String> appendAll(List<String> tables, String table)
    {
        List<String> all = new ArrayList<>(tables);
        all.add(table);
        return all;
    }

    private static List<List<String>> digest(TestingDatabase database, String table)
            throws SQLException
    {
        return database.query("SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM public." + table + " t");
    }

    private static Timestamp epoch()
    {
        return new Timestamp(0);
    }

    private Timestamp targetNow()
            throws SQLException
    {
        try (Connection connection = target.connect(); Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("SELECT now()")) {
            rows.next();
            return rows.getTimestamp(1);
        }
    }

    /** Waits, polling often (chunks commit every few tens of milliseconds), until {@code chunks} chunk rows were committed after {@code since}. */
    private void awaitChunksSince(Process process, Path log, Timestamp since, int chunks)
            throws Exception
    {
        try (Connection connection = target.connect()) {
            ServiceProcess.awaitProgress(process, log, chunks + " chunks loaded", PROGRESS_TIMEOUT, Duration.ofMillis(5),
                    () -> assertThat(chunksSince(connection, since)).isGreaterThanOrEqualTo(chunks));
        }
    }

    private long chunksSince(Connection connection, Timestamp since)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM public.pgsink_initial_load WHERE sink_name = ? AND chunk >= 0 AND loaded_at > ?")) {
            statement.setString(1, sinkName);
            statement.setTimestamp(2, since);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
        catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) {
                // created by the run's first connection
                return 0;
            }
            throw e;
        }
    }

    private boolean loadComplete()
            throws SQLException
    {
        return !target.query("SELECT 1 FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName + "' AND chunk = -2").isEmpty();
    }

    private static void kill(Process process, String moment)
            throws InterruptedException
    {
        assertThat(process.isAlive()).as("pgsink is alive when killed " + moment).isTrue();
        process.destroyForcibly();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        System.out.println("InitialLoadCrashIT: killed " + moment);
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public\\.(alpha|beta|gamma|delta|appended)");
        properties.put("schema.evolution", "add-columns");
        properties.put("tables.without.key", "append-only");
        properties.put("flush.interval.ms", "50");
        properties.put("initial.load.parallelism", "2");
        // many small chunks: the kills land between their commits
        properties.put("initial.load.chunk.bytes", Long.toString(1024 * 1024));
        properties.put("initial.load.progress.interval.ms", "1000");
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        return file;
    }

}
