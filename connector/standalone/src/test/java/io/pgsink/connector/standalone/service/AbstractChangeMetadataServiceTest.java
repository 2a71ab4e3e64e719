package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Metadata columns, soft deletes and history tables end to end: a real PostgreSQL source, the
 * Debezium engine of the standalone service, and a target the sink creates its tables in
 * ({@code schema.evolution=add-columns}).
 */
abstract class AbstractChangeMetadataServiceTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("meta", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    protected abstract TestingPostgreSqlServer targetServer();

    private Map<String, String> configuration(String includeList, Map<String, String> more)
    {
        Map<String, String> properties = pipeline.properties(includeList);
        properties.put("http.port", "0");
        properties.put("http.host", "127.0.0.1");
        properties.put("schema.evolution", "add-columns");
        properties.put("metadata.operation.column", "_op");
        properties.put("metadata.source.position.column", "_lsn");
        properties.putAll(more);
        return properties;
    }

    @Test
    void metadataColumnsAndSoftDeletes()
            throws Exception
    {
        source.execute("CREATE TABLE public.accounts (id int PRIMARY KEY, name text NOT NULL, big text)",
                "INSERT INTO public.accounts SELECT g, 'loaded ' || g, NULL FROM generate_series(1, 20) g");
        Map<String, String> properties = configuration("public.accounts", Map.of(
                "metadata.source.timestamp.column", "_committed_at",
                "metadata.applied.timestamp.column", "_applied_at",
                "delete.mode", "soft",
                "delete.flag.column", "_deleted",
                "delete.timestamp.column", "_deleted_at"));
        try (RunningService running = RunningService.start(properties)) {
            // copied by the initial load: no change behind them, so no metadata, and not deleted
            RunningService.await("the initial load", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*), count(_op), bool_or(_deleted) FROM public.accounts")).containsExactly(List.of("20", "0", "f"));
            });
            source.execute("INSERT INTO public.accounts VALUES (100, 'new', NULL)",
                    "UPDATE public.accounts SET name = 'renamed' WHERE id = 1",
                    "UPDATE public.accounts SET big = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g) WHERE id = 4");
            // a soft delete keeps the values the target row has (a change merged into the delete's flush before it is not written)
            RunningService.await("the update of row 4", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT length(big) FROM public.accounts WHERE id = 4")).containsExactly(List.of("6400"));
            });
            source.execute("DELETE FROM public.accounts WHERE id IN (2, 3, 4)",
                    // a key deleted, then inserted again in a later transaction
                    "INSERT INTO public.accounts VALUES (2, 'back', 'again')",
                    // an unchanged TOAST value of a kept row: filled from the target
                    "UPDATE public.accounts SET big = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 100) g) WHERE id = 5",
                    "UPDATE public.accounts SET name = 'after toast' WHERE id = 5");
            RunningService.await("the changes", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT id, name, big FROM public.accounts WHERE NOT _deleted ORDER BY id")).isEqualTo(source.query("SELECT id, name, big FROM public.accounts ORDER BY id"));
                assertThat(target.query("SELECT id FROM public.accounts WHERE _deleted ORDER BY id")).containsExactly(List.of("3"), List.of("4"));
            });
        }
        assertThat(target.query("SELECT id, name, length(big), _op, _deleted_at IS NOT NULL FROM public.accounts WHERE id IN (1, 2, 3, 4, 5, 100) ORDER BY id")).containsExactly(
                Arrays.asList("1", "renamed", null, "u", "f"),
                List.of("2", "back", "5", "c", "f"),
                Arrays.asList("3", "loaded 3", null, "d", "t"),
                // a soft-deleted row keeps its last values
                List.of("4", "loaded 4", "6400", "d", "t"),
                List.of("5", "after toast", "3200", "u", "f"),
                Arrays.asList("100", "new", null, "c", "f"));
        // streamed rows carry the commit time, the change's LSN and the apply time; later changes have later LSNs
        assertThat(target.query("SELECT count(*) FROM public.accounts WHERE _op IS NOT NULL AND (_committed_at IS NULL OR _applied_at IS NULL OR _lsn::pg_lsn IS NULL"
                + " OR _committed_at > _applied_at OR _applied_at > now() OR _committed_at < now() - interval '10 minutes')")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT (SELECT _lsn::pg_lsn FROM public.accounts WHERE id = 100) < (SELECT _lsn::pg_lsn FROM public.accounts WHERE id = 2),"
                + " (SELECT _deleted_at FROM public.accounts WHERE id = 3) = (SELECT _committed_at FROM public.accounts WHERE id = 3)")).containsExactly(List.of("t", "t"));
        assertThat(target.query("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'public.accounts'::regclass AND attname LIKE '\\_%' ORDER BY attnum"))
                .containsExactly(List.of("_op", "text"), List.of("_committed_at", "timestamp with time zone"), List.of("_lsn", "text"),
                        List.of("_applied_at", "timestamp with time zone"), List.of("_deleted", "boolean"), List.of("_deleted_at", "timestamp with time zone"));
    }

    @Test
    void historyAppendsEveryChangeExactlyOnceAcrossRestarts()
            throws Exception
    {
        source.execute("CREATE TABLE public.ledger (id int PRIMARY KEY, v int)",
                "CREATE TABLE public.balances (id int PRIMARY KEY, v int NOT NULL)");
        Map<String, String> properties = configuration("public.ledger,public.balances", Map.of("history.table.include.list", "public\\.ledger", "flush.max.events", "7"));
        List<List<String>> expected = new ArrayList<>();
        try (RunningService running = RunningService.start(properties)) {
            // changes before the slot exists are in the initial load's snapshot, not in the history
            RunningService.await("streaming", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
            });
            for (int round = 0; round < 3; round++) {
                change(round, expected);
            }
            awaitHistory(running, expected);
        }
        // changes while the service is down wait in the slot; those applied before must not come again
        for (int round = 3; round < 5; round++) {
            change(round, expected);
        }
        try (RunningService running = RunningService.start(properties)) {
            awaitHistory(running, expected);
            change(5, expected);
            awaitHistory(running, expected);
            RunningService.await("the merged table", CATCH_UP, () -> assertThat(target.query("SELECT id, v FROM public.balances ORDER BY id"))
                    .isEqualTo(source.query("SELECT id, v FROM public.balances ORDER BY id")));
        }
        // one row per change: no position appears twice for one operation and key
        assertThat(target.query("SELECT count(*) FROM (SELECT _lsn, _op, id FROM public.ledger GROUP BY 1, 2, 3 HAVING count(*) > 1) d")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT count(*) FROM pg_index WHERE indrelid = 'public.ledger'::regclass")).containsExactly(List.of("0"));
    }

    /** One round of changes, in several source transactions: inserts, updates, deletes, and a key change; {@code expected} gets the history rows they make. */
    private void change(int round, List<List<String>> expected)
            throws Exception
    {
        int base = round * 10;
        for (int i = 1; i <= 4; i++) {
            source.execute("INSERT INTO public.ledger VALUES (" + (base + i) + ", 0)", "INSERT INTO public.balances VALUES (" + (base + i) + ", 0) ON CONFLICT (id) DO UPDATE SET v = 0");
            expected.add(List.of(Integer.toString(base + i), "0", "c"));
        }
        try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            for (int step = 1; step <= 3; step++) {
                statement.execute("UPDATE public.ledger SET v = v + " + step + " WHERE id IN (" + (base + 1) + ", " + (base + 2) + ")");
                statement.execute("UPDATE public.balances SET v = v + " + step + " WHERE id = " + (base + 1));
            }
            connection.commit();
        }
        int v = 0;
        for (int step = 1; step <= 3; step++) {
            v += step;
            expected.add(List.of(Integer.toString(base + 1), Integer.toString(v), "u"));
            expected.add(List.of(Integer.toString(base + 2), Integer.toString(v), "u"));
        }
        source.execute("DELETE FROM public.ledger WHERE id = " + (base + 3), "UPDATE public.ledger SET id = " + (base + 9) + " WHERE id = " + (base + 4));
        expected.add(Arrays.asList(Integer.toString(base + 3), null, "d"));
        // a key change: the old key's history ends with a delete, the new key's starts with its row
        expected.add(Arrays.asList(Integer.toString(base + 4), null, "d"));
        expected.add(List.of(Integer.toString(base + 9), "0", "u"));
    }

    private void awaitHistory(RunningService running, List<List<String>> expected)
    {
        // deletes carry the key only (REPLICA IDENTITY DEFAULT): v is NULL in them
        RunningService.await(expected.size() + " history rows", CATCH_UP, () -> {
            running.assertRunning();
            assertThat(target.query("SELECT id::text, v::text, _op FROM public.ledger ORDER BY _lsn::pg_lsn, _op, id")).isEqualTo(expected);
        });
    }
}
