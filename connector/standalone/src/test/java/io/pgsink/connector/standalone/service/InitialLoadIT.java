package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The COPY-based initial load ({@code source.snapshot.mode=initial}, the default) end to end:
 * several tables copied in parallel chunks while the source keeps changing, then streaming from
 * the slot's consistent point; every target table must end equal to its source table (count and
 * md5 of its rows). Keyless append-only tables detect a change applied twice or lost at the seam.
 */
class InitialLoadIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(120);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("load");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    private Map<String, String> configuration(String includeList)
    {
        Map<String, String> properties = pipeline.properties(includeList);
        properties.put("schema.evolution", "add-columns");
        properties.put("tables.without.key", "append-only");
        properties.put("initial.load.parallelism", "3");
        // small chunks: the large table is split into several ctid ranges
        properties.put("initial.load.chunk.bytes", Long.toString(1024 * 1024));
        properties.put("initial.load.progress.interval.ms", "1000");
        properties.put("target.jdbc.ApplicationName", "pgsink-load-it");
        return properties;
    }

    /** Row count and md5 of every row's text, in a stable order. */
    private static List<List<String>> digest(TestingDatabase database, String table)
            throws SQLException
    {
        return database.query("SELECT count(*), md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM " + table + " t");
    }

    private void awaitEqual(RunningService running, String sourceTable, String targetTable)
    {
        RunningService.await("target " + targetTable + " to equal source " + sourceTable, CATCH_UP, () -> {
            running.assertRunning();
            assertThat(digest(target, targetTable)).isEqualTo(digest(source, sourceTable));
        });
    }

    static void awaitStreaming(RunningService running)
    {
        RunningService.await("the initial load to complete", CATCH_UP, () -> {
            running.assertRunning();
            assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
        });
    }

    @Test
    void loadsTablesInParallelChunksWhileTheSourceChangesThenStreams()
            throws Exception
    {
        source.execute(
                "CREATE SCHEMA \"Sales ü\"",
                "CREATE TABLE \"Sales ü\".\"Big Orders\" (id bigint PRIMARY KEY, qty int, label text, price numeric(12,2), active boolean, updated timestamptz)",
                "INSERT INTO \"Sales ü\".\"Big Orders\" SELECT g, g % 100, 'label ' || g, g / 7.0, g % 2 = 0, '2024-01-01'::timestamptz + g * interval '1 minute'"
                        + " FROM generate_series(1, 60000) g",
                "CREATE TABLE public.log (seq bigint, note text)",
                "INSERT INTO public.log SELECT g, 'seeded' FROM generate_series(1, 5000) g",
                "CREATE TABLE public.docs (id int PRIMARY KEY, body text)",
                // TOAST-sized values, stored out of line
                "INSERT INTO public.docs SELECT g, (SELECT string_agg(md5(g::text || h::text), '') FROM generate_series(1, 3000) h) FROM generate_series(1, 20) g");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        AtomicLong transactions = new AtomicLong();
        Thread workload = new Thread(() -> {
            try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
                long i = 0;
                while (!stop.get()) {
                    i++;
                    statement.execute("UPDATE \"Sales ü\".\"Big Orders\" SET qty = qty + 1, updated = now() WHERE id = " + (1 + (i * 7919) % 60000));
                    statement.execute("INSERT INTO \"Sales ü\".\"Big Orders\" VALUES (" + (100000 + i) + ", 1, 'live', 1.00, true, now())");
                    statement.execute("DELETE FROM \"Sales ü\".\"Big Orders\" WHERE id = " + (1 + (i * 104729) % 60000));
                    statement.execute("INSERT INTO public.log VALUES (" + (100000 + i) + ", 'live')");
                    if (i % 10 == 0) {
                        statement.execute("UPDATE public.docs SET body = body || 'x' WHERE id = " + (1 + i % 20));
                    }
                    transactions.incrementAndGet();
                }
            }
            catch (Throwable e) {
                workloadFailure.set(e);
            }
        }, "source-workload");
        workload.start();
        Map<String, String> properties = configuration("Sales ü\\.Big Orders,public\\.log,public\\.docs");
        // routing: every table into schema "loaded" of the target, created by the sink
        properties.put("target.table.name.format", "loaded.${table}");
        target.execute("CREATE SCHEMA loaded");
        try (RunningService running = RunningService.start(properties)) {
            awaitStreaming(running);
            long atStreaming = transactions.get();
            RunningService.await("the workload to go on while streaming", CATCH_UP, () -> assertThat(transactions.get()).isGreaterThan(atStreaming + 50));
            stop.set(true);
            workload.join();
            assertThat(workloadFailure.get()).isNull();
            awaitEqual(running, "\"Sales ü\".\"Big Orders\"", "loaded.\"Big Orders\"");
            awaitEqual(running, "public.log", "loaded.log");
            awaitEqual(running, "public.docs", "loaded.docs");
            assertThat(running.service().metrics().initialLoadRowsTotal()).isGreaterThanOrEqualTo(60000 + 5000 + 20);
        }
        finally {
            stop.set(true);
            workload.join();
        }
        // several chunks for the large table (one where the source cannot scan ctid ranges, before
        // PostgreSQL 14), all recorded with the slot's consistent point
        boolean tidRanges = TestingPostgreSqlServer.source().majorVersion() >= 14;
        assertThat(target.query("SELECT count(*) > 1 FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName + "' AND source_table = 'Big Orders'"))
                .containsExactly(List.of(tidRanges ? "t" : "f"));
        assertThat(target.query("SELECT count(*) FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName + "' AND chunk = -2")).containsExactly(List.of("1"));
    }

    /**
     * Transactions committed just before and just after the slot's consistent point: one is open
     * while the slot is created (the slot waits for it), others commit all the while. Each inserts
     * a unique sequence number into a keyless append-only table, so the target shows any change
     * lost (missing number) or applied twice (a number twice).
     */
    @Test
    void changesAroundTheConsistentPointAreNeitherLostNorDoubled()
            throws Exception
    {
        source.execute("CREATE TABLE public.seam (seq bigint, origin text)", "INSERT INTO public.seam SELECT g, 'seeded' FROM generate_series(1, 1000) g");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        AtomicLong committed = new AtomicLong();
        Thread workload = new Thread(() -> {
            try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
                long seq = 10_000;
                while (!stop.get()) {
                    statement.execute("INSERT INTO public.seam VALUES (" + seq++ + ", 'live')");
                    committed.incrementAndGet();
                }
            }
            catch (Throwable e) {
                workloadFailure.set(e);
            }
        }, "seam-workload");
        try (Connection open = source.connect(); Statement statement = open.createStatement()) {
            open.setAutoCommit(false);
            statement.execute("INSERT INTO public.seam VALUES (5000, 'open across the slot creation')");
            workload.start();
            try (RunningService running = RunningService.start(configuration("public\\.seam"))) {
                // the slot's creation waits for the open transaction: commit it once the walsender waits
                RunningService.await("the slot creation to wait", CATCH_UP, () -> {
                    running.assertRunning();
                    assertThat(source.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'walsender'"
                            + " AND application_name = 'pgsink initial load'")).isNotEqualTo(List.of(List.of("0")));
                });
                open.commit();
                awaitStreaming(running);
                long atStreaming = committed.get();
                RunningService.await("changes while streaming", CATCH_UP, () -> assertThat(committed.get()).isGreaterThan(atStreaming + 100));
                stop.set(true);
                workload.join();
                assertThat(workloadFailure.get()).isNull();
                awaitEqual(running, "public.seam", "public.seam");
            }
        }
        finally {
            stop.set(true);
            workload.join();
        }
        assertThat(target.query("SELECT count(*) FROM (SELECT seq FROM public.seam GROUP BY seq HAVING count(*) > 1) d")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT count(*) FROM public.seam WHERE seq = 5000")).containsExactly(List.of("1"));
    }

    /**
     * A load that fails part way resumes: tables loaded completely stay, the others are emptied
     * and copied again at a new snapshot, and the stream, which starts at the first slot's point,
     * applies to them only the changes that snapshot does not show. The keyless tables would show
     * any change applied twice.
     */
    @Test
    void aFailedLoadResumesWithoutLosingOrDoublingChanges()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.first (seq bigint, note text)",
                "INSERT INTO public.first SELECT g, 'seeded' FROM generate_series(1, 20000) g",
                "CREATE TABLE public.second (seq bigint, note text)",
                "INSERT INTO public.second SELECT g, CASE WHEN g = 19999 THEN 'refused' ELSE 'seeded' END FROM generate_series(1, 20000) g");
        // the target refuses one row of the second table, so its load fails
        target.execute(
                "CREATE TABLE public.first (seq bigint, note text)",
                "CREATE TABLE public.second (seq bigint, note text CHECK (note <> 'refused'))");
        Map<String, String> properties = configuration("public\\.first,public\\.second");
        properties.put("initial.load.parallelism", "1");
        RunningService failed = RunningService.start(properties);
        assertThat(failed.awaitFailure(CATCH_UP)).hasMessageContaining("\"public\".\"second\"").hasMessageContaining("line 19999").hasMessageNotContaining("refused");
        failed.service().close();
        // changes while the service is down: both tables
        source.execute(
                "INSERT INTO public.first SELECT g, 'between' FROM generate_series(30001, 30100) g",
                "INSERT INTO public.second SELECT g, 'between' FROM generate_series(30001, 30100) g");
        target.execute("ALTER TABLE public.second DROP CONSTRAINT second_note_check");
        try (RunningService running = RunningService.start(properties)) {
            awaitStreaming(running);
            source.execute(
                    "INSERT INTO public.first SELECT g, 'after' FROM generate_series(40001, 40100) g",
                    "INSERT INTO public.second SELECT g, 'after' FROM generate_series(40001, 40100) g");
            awaitEqual(running, "public.first", "public.first");
            awaitEqual(running, "public.second", "public.second");
        }
    }

    /** A value the target column cannot take stops the load naming table and column, and leaves none of the chunk's rows. */
    @Test
    void aValueTheTargetRefusesStopsTheLoad()
            throws Exception
    {
        source.execute("CREATE TABLE public.prices (id int PRIMARY KEY, price numeric(12,2))", "INSERT INTO public.prices VALUES (1, 1.25)");
        target.execute("CREATE TABLE public.prices (id int PRIMARY KEY, price integer)");
        RunningService failed = RunningService.start(configuration("public\\.prices"));
        assertThat(failed.awaitFailure(CATCH_UP)).hasMessageContaining("\"public\".\"prices\"").hasMessageContaining("integer").hasMessageContaining("column price")
                .hasMessageNotContaining("1.25");
        failed.service().close();
        assertThat(target.query("SELECT count(*) FROM public.prices")).containsExactly(List.of("0"));
    }
}
