package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A history table through SIGKILLs of the service: a history batch is not idempotent, so only the
 * positions stored with it keep a restarted service from appending a change twice. The workload
 * inserts rows and updates each to values it never had before, one change per source transaction,
 * while the service is killed a few milliseconds after it stored a position (inside the next
 * flush, or between flushes), again and again; at the end the history must hold every change
 * exactly once.
 */
class HistoryCrashIT
{
    private static final Duration PROGRESS_TIMEOUT = Duration.ofSeconds(120);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("history");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @Test
    void everyChangeOnceAfterRepeatedKills(@TempDir Path directory)
            throws Exception
    {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        source.execute("CREATE TABLE public.ledger (id int PRIMARY KEY, v int NOT NULL)");
        String sinkName = pipeline.sinkName();
        Map<String, String> properties = pipeline.properties("public.ledger");
        properties.put("flush.interval.ms", "50");
        properties.put("flush.max.events", "40");
        properties.put("schema.evolution", "add-columns");
        properties.put("table.mode", "history");
        properties.put("metadata.operation.column", "_op");
        properties.put("metadata.source.position.column", "_lsn");
        Path config = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        Path log = directory.resolve("history-crash.log");

        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong changes = new AtomicLong();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        Thread workload = new Thread(() -> {
            try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
                for (int id = 1; !stop.get(); id++) {
                    statement.execute("INSERT INTO public.ledger VALUES (" + id + ", 0)");
                    changes.incrementAndGet();
                    // every update gives its row a value it never had: each change is one distinct history row
                    statement.execute("UPDATE public.ledger SET v = v + 1 WHERE id BETWEEN " + Math.max(1, id - 3) + " AND " + id);
                    changes.addAndGet(Math.min(id, 4));
                    Thread.sleep(2);
                }
            }
            catch (Throwable e) {
                workloadFailure.set(e);
            }
        }, "history-crash-workload");

        int kills = 4;
        String stored = null;
        try {
            for (int kill = 1; kill <= kills; kill++) {
                Process process = ServiceProcess.start(config, log);
                if (kill == 1) {
                    // changes before the slot exists would be in the initial load's copy, not in the history
                    ServiceProcess.awaitProgress(process, log, "streaming", PROGRESS_TIMEOUT, () -> assertThat(Files.readString(log)).contains("streaming changes from"));
                    workload.start();
                }
                String previous = stored;
                AtomicReference<String> position = new AtomicReference<>();
                ServiceProcess.awaitProgress(process, log, "a new stored position", PROGRESS_TIMEOUT, () -> {
                    String current = storedPosition(sinkName);
                    assertThat(current).isNotNull().isNotEqualTo(previous);
                    position.set(current);
                });
                Thread.sleep(random.nextInt(40));
                assertThat(process.isAlive()).as("pgsink exited by itself; log:\n%s", ServiceProcess.tail(log)).isTrue();
                process.destroyForcibly();
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                stored = storedPosition(sinkName);
                System.out.println("HistoryCrashIT: kill " + kill + " of " + kills + " (seed " + seed + ")");
            }
        }
        finally {
            stop.set(true);
            if (workload.isAlive()) {
                workload.join();
            }
        }
        assertThat(workloadFailure.get()).isNull();
        long total = changes.get();

        Process last = ServiceProcess.start(config, log);
        try {
            RunningService.await(total + " history rows", Duration.ofSeconds(180), () -> {
                assertThat(last.isAlive()).as("pgsink is running; log:\n%s", ServiceProcess.tail(log)).isTrue();
                assertThat(target.query("SELECT count(*) FROM public.ledger")).containsExactly(List.of(Long.toString(total)));
            });
        }
        finally {
            last.destroy();
            if (!last.waitFor(60, TimeUnit.SECONDS)) {
                last.destroyForcibly();
            }
        }
        // every source row's history: its insert, then each value once, in LSN order; nothing twice, nothing missing
        assertThat(target.query("SELECT count(*) FROM (SELECT id, v, _op FROM public.ledger GROUP BY 1, 2, 3 HAVING count(*) > 1) doubled")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT count(*) FROM public.ledger h JOIN (SELECT id, v FROM public.ledger WHERE _op = 'c') c USING (id) WHERE h._op = 'u'"
                + " AND h._lsn::pg_lsn <= (SELECT _lsn::pg_lsn FROM public.ledger i WHERE i.id = h.id AND i._op = 'c')")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT id::text, max(v)::text FROM public.ledger GROUP BY id ORDER BY id")).isEqualTo(source.query("SELECT id::text, v::text FROM public.ledger ORDER BY id"));
        assertThat(Files.readString(log)).contains("resuming from the position stored in the target");
    }

    private String storedPosition(String sinkName)
            throws Exception
    {
        try {
            List<List<String>> rows = target.query("SELECT string_agg(source_offset, ',') FROM public.pgsink_offsets WHERE sink_name = '" + sinkName + "'");
            return rows.get(0).get(0);
        }
        catch (java.sql.SQLException e) {
            return null;
        }
    }
}
