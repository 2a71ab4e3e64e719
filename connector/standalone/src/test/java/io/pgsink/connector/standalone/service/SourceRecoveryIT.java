package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.preflight.SourcePreflight;
import io.pgsink.core.change.SourcePosition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The replication slot dropped while the service was stopped: {@code pgsink run} stops at once
 * with pgsink's message naming the slot and the stored position and saying how to recover;
 * {@code pgsink reset} then forgets the stored positions, and the next run loads the source again,
 * with the change made while the slot was gone.
 */
class SourceRecoveryIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(120);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("recovery");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)", "INSERT INTO public.items SELECT g, 'n' || g FROM generate_series(1, 10) g");
    }

    private Map<String, String> properties()
    {
        Map<String, String> properties = pipeline.properties("public.items");
        properties.put("schema.evolution", "add-columns");
        return properties;
    }

    /**
     * A slot behind the position stored in the target (the service stopped between committing a
     * batch in the target and confirming it to the slot) is confirmed up to it before streaming
     * starts, not when the next change is applied: the server may free the WAL before it.
     */
    @Test
    void aSlotBehindTheStoredPositionIsConfirmedUpToItAtStart()
            throws Exception
    {
        source.execute("SELECT pg_create_logical_replication_slot('" + sinkName + "', 'pgoutput')",
                "INSERT INTO public.items SELECT g, 'later' FROM generate_series(100, 200) g");
        String lsn = source.query("SELECT pg_current_wal_lsn()").get(0).get(0);
        String[] parts = lsn.split("/");
        long stored = (Long.parseLong(parts[0], 16) << 32) | Long.parseLong(parts[1], 16);
        assertThat(source.query("SELECT confirmed_flush_lsn < '" + lsn + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + sinkName + "'")).containsExactly(List.of("t"));
        String before = source.query("SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + sinkName + "'").get(0).get(0);
        // a slot is confirmed only up to WAL the server has flushed (asynchronous commits, as on the
        // embedded test server, are flushed by the WAL writer a moment later)
        RunningService.await("the source to flush its WAL up to " + lsn, Duration.ofSeconds(30),
                () -> assertThat(source.query("SELECT pg_current_wal_flush_lsn() >= '" + lsn + "'::pg_lsn")).containsExactly(List.of("t")));

        new SourcePreflight(StandaloneConfig.parse(properties())).check(Map.of("{\"server\":\"" + sinkName + "\"}",
                new SourcePosition("{\"server\":\"" + sinkName + "\"}", "{\"lsn\":" + stored + ",\"lsn_proc\":" + stored + ",\"txId\":1}")));

        // the server confirms a logical slot up to the WAL it has decoded and flushed, which may end
        // before the insert position taken as the stored one: moved forward, never past it
        assertThat(source.query("SELECT confirmed_flush_lsn > '" + before + "'::pg_lsn AND confirmed_flush_lsn <= '" + lsn + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + sinkName + "'"))
                .as("the slot, at %s before, confirmed towards the stored position %s", before, lsn)
                .containsExactly(List.of("t"));
    }

    @Test
    void missingSlotIsExplainedAndResetRecovers(@TempDir Path directory)
            throws Exception
    {
        try (RunningService running = RunningService.start(properties())) {
            RunningService.await("the initial load", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.items")).containsExactly(List.of("10"));
            });
            // a streamed change stores a position (the load records its own progress elsewhere)
            source.execute("INSERT INTO public.items VALUES (12, 'streamed')");
            RunningService.await("a streamed change and a stored position", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.items")).containsExactly(List.of("11"));
                assertThat(running.service().committedPositions()).isNotEmpty();
            });
        }
        assertThat(target.query("SELECT source_table FROM public.pgsink_source_tables WHERE sink_name = '" + sinkName + "'")).containsExactly(List.of("items"));
        source.execute("SELECT pg_drop_replication_slot('" + sinkName + "')", "INSERT INTO public.items VALUES (11, 'while the slot was gone')");

        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties());
        TestingCommand run = TestingCommand.run("run", "--config", file.toString());
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err())
                .startsWith("pgsink: The replication slot " + sinkName + " does not exist in " + source.jdbcUrl() + ", but the target stores position lsn ")
                .contains("for sink " + sinkName + ": the changes since then are lost to the slot")
                .contains("run `pgsink reset --config FILE`")
                .doesNotContain("\tat ");
        assertThat(run.err().lines()).hasSize(1);

        TestingCommand reset = TestingCommand.run("reset", "--config", file.toString());
        assertThat(reset.exitCode()).as(reset.err()).isZero();
        assertThat(reset.out()).isEqualTo("pgsink reset: replication slot " + sinkName + " did not exist; forgot 1 stored position(s) of sink " + sinkName
                + ". The next pgsink run snapshots every captured table and streams from there.\n");
        // the source tables as the last run read them are forgotten too: the next run takes them as it finds them
        assertThat(target.query("SELECT count(*) FROM public.pgsink_source_tables WHERE sink_name = '" + sinkName + "'")).containsExactly(List.of("0"));

        try (RunningService running = RunningService.start(properties())) {
            RunningService.await("the source loaded again, with the change made while the slot was gone", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*), max(id) FROM public.items WHERE id <> 12")).containsExactly(List.of("11", "11"));
                assertThat(target.query("SELECT count(*) FROM public.items WHERE id = 12")).containsExactly(List.of("1"));
            });
        }
    }
}
