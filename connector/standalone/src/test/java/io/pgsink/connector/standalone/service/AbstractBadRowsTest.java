package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rows the target refuses, end to end through the standalone service. The source's columns are
 * looser than the target's, so that the source can hold what the target refuses: a value too long
 * for {@code varchar(3)}, a value breaking a check constraint, text that is no integer, and an
 * update of a table without a primary key ({@code tables.without.key=append-only}).
 * ({@code errors.tolerance=none}) stops the service with table, key, column, position and reason,
 * and nothing after the row is applied or skipped: after the target is fixed the service goes on from
 * that row. ({@code errors.tolerance=all}) writes each bad row to the dead-letter table, applies the
 * rest and streams on. (A NUL character cannot come from a PostgreSQL source; the merge-level
 * {@code RejectedRowsIT} covers it.)
 */
abstract class AbstractBadRowsTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final String SOURCE_TABLES = "CREATE TABLE public.accounts (id int PRIMARY KEY, code text, balance int, amount text, note text)";
    private static final String TARGET_TABLES = "CREATE TABLE public.accounts (id int PRIMARY KEY, code varchar(3), balance int CHECK (balance >= 0), amount int, note text)";
    private static final String KEYLESS = "CREATE TABLE public.log (message text)";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("bad_rows", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute(SOURCE_TABLES, KEYLESS, "ALTER TABLE public.log REPLICA IDENTITY FULL");
        target.execute(TARGET_TABLES, KEYLESS);
    }

    private Map<String, String> configuration(String tolerance)
    {
        Map<String, String> properties = pipeline.properties("public.accounts,public.log");
        properties.put("errors.tolerance", tolerance);
        properties.put("tables.without.key", "append-only");
        return properties;
    }

    @Test
    void toleranceNoneStopsAtTheRowAndSkipsNothing()
            throws Exception
    {
        source.execute("INSERT INTO public.accounts VALUES (1, 'ok', 1, '1', 'snapshot')");
        Map<String, String> properties = configuration("none");
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the snapshot", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT id FROM public.accounts")).containsExactly(List.of("1"));
            });
        }
        String beforeBadRow = source.query("SELECT pg_current_wal_lsn() - '0/0'").get(0).get(0);
        source.execute("INSERT INTO public.accounts VALUES (2, 'XYZZY-too-long', 1, '2', 'bad')");
        source.execute("INSERT INTO public.accounts VALUES (3, 'ok', 1, '3', 'after the bad row')");

        RunningService failed = RunningService.start(properties);
        Throwable failure = failed.awaitFailure(CATCH_UP);
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA));
        assertThat(failure.getMessage())
                .contains("\"public\".\"accounts\" key (2) column code")
                .contains("\"lsn\":")
                .contains("value too long for type character varying(3)")
                .doesNotContain("XYZZY");
        failed.service().close();
        // nothing after the bad row was applied, and the stored position did not move past it
        assertThat(target.query("SELECT id FROM public.accounts ORDER BY id")).containsExactly(List.of("1"));
        assertThat(target.query("SELECT count(*) FROM public.pgsink_offsets WHERE sink_name = '" + properties.get("sink.name") + "' AND (source_offset::jsonb ->> 'lsn')::numeric > " + beforeBadRow))
                .containsExactly(List.of("0"));

        // once the target takes the row, the service goes on from it: nothing was skipped
        target.execute("ALTER TABLE public.accounts ALTER COLUMN code TYPE text");
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the target to equal the source", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT * FROM public.accounts ORDER BY id")).isEqualTo(source.query("SELECT * FROM public.accounts ORDER BY id"));
            });
        }
    }

    @Test
    void toleranceNoneStopsAtAnUpdateOfATableWithoutKey()
            throws Exception
    {
        source.execute("INSERT INTO public.log VALUES ('first')");
        RunningService failed = RunningService.start(configuration("none"));
        RunningService.await("the snapshot", CATCH_UP, () -> {
            failed.assertRunning();
            assertThat(target.query("SELECT message FROM public.log")).containsExactly(List.of("first"));
        });
        source.execute("UPDATE public.log SET message = 'XYZZY-changed'");
        Throwable failure = failed.awaitFailure(CATCH_UP);
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH));
        assertThat(failure.getMessage()).contains("\"public\".\"log\"").contains("no primary key").doesNotContain("XYZZY");
        failed.service().close();
        assertThat(target.query("SELECT message FROM public.log")).containsExactly(List.of("first"));
    }

    @Test
    void toleranceAllDeadLettersEachBadRowAndStreamsOn()
            throws Exception
    {
        source.execute("INSERT INTO public.accounts VALUES (1, 'ok', 1, '1', 'snapshot')");
        try (RunningService running = RunningService.start(configuration("all"))) {
            RunningService.await("the snapshot", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT id FROM public.accounts")).containsExactly(List.of("1"));
            });
            source.execute(
                    "INSERT INTO public.accounts VALUES (2, 'long', 1, '2', 'value too long')",
                    "INSERT INTO public.accounts VALUES (3, 'ok', -5, '3', 'check constraint')",
                    "INSERT INTO public.accounts VALUES (4, 'ok', 1, 'lots', 'type mismatch')",
                    "INSERT INTO public.accounts VALUES (5, 'ok', 1, '5', 'good')",
                    "INSERT INTO public.log VALUES ('appended')",
                    "UPDATE public.log SET message = 'update without key'",
                    "UPDATE public.accounts SET note = 'updated' WHERE id = 1");
            RunningService.await("the good rows and four dead letters", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT id, note FROM public.accounts ORDER BY id")).containsExactly(List.of("1", "updated"), List.of("5", "good"));
                assertThat(target.query("SELECT count(*) FROM public.pgsink_dead_letters")).containsExactly(List.of("4"));
            });
            assertThat(target.query("SELECT message FROM public.log")).containsExactly(List.of("appended"));

            List<List<String>> dead = target.query("SELECT source_table, target_table, row_key, column_name, source_partition, source_offset, reason, sink_name"
                    + " FROM public.pgsink_dead_letters ORDER BY (source_offset::jsonb ->> 'lsn')::bigint, row_key");
            assertThat(dead).extracting(row -> row.get(1) + " " + row.get(2)).containsExactly(
                    "\"public\".\"accounts\" (2)", "\"public\".\"accounts\" (3)", "\"public\".\"accounts\" (4)", "\"public\".\"log\" ()");
            assertThat(dead).allSatisfy(row -> {
                assertThat(row.get(4)).isEqualTo("{\"server\":\"" + sinkName + "\"}");
                assertThat(row.get(5)).contains("\"lsn\":");
                assertThat(row.get(7)).isEqualTo(sinkName);
            });
            assertThat(dead.get(0).get(3)).isEqualTo("code");
            assertThat(dead.get(0).get(6)).contains("value too long for type character varying(3)").contains("22001");
            assertThat(dead.get(1).get(6)).contains("check constraint").contains("23514");
            assertThat(dead.get(2).get(6)).contains("invalid input syntax for type integer").contains("22P02");
            assertThat(dead.get(3).get(6)).contains("no primary key");

            // streaming goes on
            source.execute("INSERT INTO public.accounts VALUES (6, 'ok', 1, '6', 'later')");
            RunningService.await("a later row", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT id FROM public.accounts WHERE id = 6")).containsExactly(List.of("6"));
            });
        }
    }
}
