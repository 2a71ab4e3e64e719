package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link StandaloneServiceIT} (every operation, key changes, TOAST, truncate, transactions, snapshot,
 * resume) from each source to each target version of the cross-version suite, and which statements
 * apply updates there: {@code MERGE} on a PostgreSQL 15+ target, delete-insert on an older one
 * ({@code target.update.mode=auto}).
 */
@CrossVersion
class CrossVersionStandaloneServiceIT
        extends StandaloneServiceIT
{
    @Test
    void appliesUpdatesWithMergeFromPostgreSql15On()
            throws Exception
    {
        int targetVersion = TestingPostgreSqlServer.target().majorVersion();
        createBoth("CREATE TABLE public.items (id int PRIMARY KEY, n int)");
        // which row triggers the apply fires: MERGE updates in place, delete-insert deletes and inserts
        target().execute(
                "CREATE TABLE public.fired (seq serial PRIMARY KEY, op text)",
                "CREATE FUNCTION public.log_op() RETURNS trigger LANGUAGE plpgsql AS $$"
                        + " BEGIN INSERT INTO public.fired (op) VALUES (TG_OP); RETURN NULL; END $$",
                "CREATE TRIGGER log_op AFTER INSERT OR UPDATE OR DELETE ON public.items"
                        + " FOR EACH ROW EXECUTE FUNCTION public.log_op()");
        source().execute("INSERT INTO public.items VALUES (1, 0)");
        try (RunningService running = RunningService.start(configuration("public.items"))) {
            awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
            source().execute("UPDATE public.items SET n = 1 WHERE id = 1");
            awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
        }
        List<String> fired = target().query("SELECT op FROM public.fired ORDER BY seq").stream()
                .map(row -> row.get(0))
                .toList();
        List<String> expected = targetVersion >= 15
                ? List.of("INSERT", "UPDATE")
                : List.of("INSERT", "DELETE", "INSERT");
        assertThat(fired).as("triggers fired on a PostgreSQL %s target", targetVersion).isEqualTo(expected);
    }

    /**
     * Generated columns are never written: pgoutput does not publish them, Debezium's snapshot reads
     * them, and the target computes its own. Stored ones on every version, virtual ones (PostgreSQL
     * 18) on whichever side has 18.
     */
    @Test
    void leavesGeneratedColumnsToTheTarget()
            throws Exception
    {
        int sourceVersion = TestingPostgreSqlServer.source().majorVersion();
        int targetVersion = TestingPostgreSqlServer.target().majorVersion();
        String table = "CREATE TABLE public.shapes (id int PRIMARY KEY, side int,"
                + " area int GENERATED ALWAYS AS (side * side) STORED,"
                + " perimeter int GENERATED ALWAYS AS (4 * side) %s)";
        source().execute(table.formatted(sourceVersion >= 18 ? "VIRTUAL" : "STORED"),
                "INSERT INTO public.shapes (id, side) VALUES (1, 2), (2, 3)");
        target().execute(table.formatted(targetVersion >= 18 ? "VIRTUAL" : "STORED"));
        try (RunningService running = RunningService.start(configuration("public.shapes"))) {
            awaitEqual(running, "SELECT id, side, area, perimeter FROM public.shapes ORDER BY id");
            source().execute("INSERT INTO public.shapes (id, side) VALUES (3, 4)",
                    "UPDATE public.shapes SET side = 10 WHERE id = 1",
                    "DELETE FROM public.shapes WHERE id = 2");
            awaitEqual(running, "SELECT id, side, area, perimeter FROM public.shapes ORDER BY id");
        }
        assertThat(target().query("SELECT id, side, area, perimeter FROM public.shapes ORDER BY id"))
                .containsExactly(List.of("1", "10", "100", "40"), List.of("3", "4", "16", "16"));
    }
}
