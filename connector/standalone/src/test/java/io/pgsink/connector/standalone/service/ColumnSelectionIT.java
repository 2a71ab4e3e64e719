package io.pgsink.connector.standalone.service;

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
 * {@code column.exclude.list} and {@code column.rename} through the real Debezium engine: the
 * initial load, streaming (with unchanged TOASTed values of a renamed column filled from the
 * target), a key change, a table auto-created with only the written columns under their target
 * names, and a source column added later (added to the target unless excluded). A selection that
 * does not fit the source stops the service at start with every problem named.
 */
class ColumnSelectionIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);

    private static final String SOURCE_ROWS = "SELECT id, name, md5(notes), score FROM public.people ORDER BY id";
    private static final String TARGET_ROWS = "SELECT id, full_name, md5(remarks), score FROM public.people ORDER BY id";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("columns");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.people (id int PRIMARY KEY, name text, secret text, notes text, score int)",
                // EXTERNAL: stored out of line, so an update that leaves notes alone sends Debezium's placeholder
                "ALTER TABLE public.people ALTER notes SET STORAGE EXTERNAL",
                "CREATE FUNCTION big(seed int) RETURNS text LANGUAGE sql AS $$ SELECT string_agg(md5((seed * 1000 + g)::text), '') FROM generate_series(1, 300) g $$",
                "INSERT INTO public.people SELECT g, 'name ' || g, 'secret ' || g, big(g), g FROM generate_series(1, 5) g");
    }

    private Map<String, String> properties()
    {
        Map<String, String> properties = pipeline.properties("public.people");
        properties.put("schema.evolution", "add-columns");
        // a regular expression: secret and every column added later whose name starts with it
        properties.put("column.exclude.list", "public\\.people\\.secret.*");
        properties.put("column.rename", "public.people.name:full_name,public.people.notes:remarks");
        properties.put("flush.interval.ms", "200");
        return properties;
    }

    private void awaitEqual(RunningService running, String sourceRows, String targetRows)
    {
        pipeline.awaitEqual(running, sourceRows, targetRows, CATCH_UP);
    }

    @Test
    void writesOnlySelectedColumnsUnderTheirTargetNames()
            throws Exception
    {
        try (RunningService running = RunningService.start(properties())) {
            awaitEqual(running, SOURCE_ROWS, TARGET_ROWS);
            assertThat(target.query("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'people' ORDER BY ordinal_position"))
                    .containsExactly(List.of("id"), List.of("full_name"), List.of("remarks"), List.of("score"));

            source.execute("INSERT INTO public.people VALUES (6, 'name 6', 'secret 6', big(6), 6)",
                    // notes unchanged: the placeholder, filled from the target's remarks
                    "UPDATE public.people SET score = score + 100 WHERE id IN (1, 6)",
                    "UPDATE public.people SET name = 'renamed', secret = 'changed' WHERE id = 2",
                    "UPDATE public.people SET id = 30 WHERE id = 3",
                    "DELETE FROM public.people WHERE id = 4");
            awaitEqual(running, SOURCE_ROWS, TARGET_ROWS);

            // a new column is added under its own name; one the exclude list matches is not
            source.execute("ALTER TABLE public.people ADD COLUMN extra int, ADD COLUMN secret_pin text",
                    "UPDATE public.people SET extra = id * 2, secret_pin = 'pin' WHERE id IN (1, 2)",
                    "INSERT INTO public.people VALUES (7, 'name 7', 'secret 7', big(7), 7, 14, 'pin')");
            awaitEqual(running, "SELECT id, name, md5(notes), score, extra FROM public.people ORDER BY id", "SELECT id, full_name, md5(remarks), score, extra FROM public.people ORDER BY id");
            running.assertRunning();
        }
        assertThat(target.query("SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'people' ORDER BY ordinal_position"))
                .containsExactly(List.of("id"), List.of("full_name"), List.of("remarks"), List.of("score"), List.of("extra"));
        assertThat(target.query("SELECT count(*) FROM public.people WHERE remarks LIKE '%debezium_unavailable%'")).containsExactly(List.of("0"));
        assertThat(target.query("SELECT id, score FROM public.people WHERE id IN (1, 6) ORDER BY id")).containsExactly(List.of("1", "101"), List.of("6", "106"));
    }

    @Test
    void selectionThatDoesNotFitTheSourceStopsAtStartNamingEveryProblem()
            throws Exception
    {
        Map<String, String> properties = properties();
        properties.put("column.exclude.list", "public.people.id,public.nothing.*");
        properties.put("column.rename", "public.people.missing:x,public.people.notes:remarks");
        RunningService failed = RunningService.start(properties);
        Throwable failure = failed.awaitFailure(CATCH_UP);
        failed.service().close();
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG));
        assertThat(failure.getMessage())
                .contains("(3 problems)")
                .contains("column.exclude.list: excludes key column id of \"public\".\"people\"")
                .contains("entry 'public.nothing.*' matches no column of a captured table")
                .contains("column.rename: renames column missing that \"public\".\"people\" does not have");
        // stopped before anything was created
        assertThat(target.query("SELECT count(*) FROM pg_class WHERE relname = 'people'")).containsExactly(List.of("0"));
        assertThat(source.replicationSlots()).isEmpty();
    }
}
