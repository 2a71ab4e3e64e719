package io.pgsink.connector.standalone.service;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Partitioned tables through the real Debezium engine. The source table is partitioned and
 * published via its root ({@code source.publish.via.partition.root=true}): the initial load reads
 * the root ({@code COPY (SELECT ...)}), and changes of every partition stream under the root's
 * name. The target table is partitioned too, differently: rows are routed through the parent by
 * COPY, staging, MERGE (PostgreSQL 15) or delete-insert, and a source update that moves a row to
 * another partition (a changed key) moves it in the target as well. A missing target is
 * auto-created as an ordinary table.
 */
class PartitionedTablesIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    /** Every row, summed up: the table is large enough for a load of several chunks. */
    private static final String ROWS = "SELECT count(*), md5(string_agg(id || ',' || region || ',' || v || ',' || note, ';' ORDER BY id, region)) FROM public.measurements";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("partitioned");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.measurements (id int, region text, v int, note text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)",
                "CREATE TABLE public.measurements_east PARTITION OF public.measurements FOR VALUES IN ('east')",
                "CREATE TABLE public.measurements_west PARTITION OF public.measurements FOR VALUES IN ('west', 'north')",
                "INSERT INTO public.measurements SELECT g, CASE WHEN g % 2 = 0 THEN 'east' ELSE 'west' END, g, 'loaded ' || repeat('x', 100) FROM generate_series(1, 20000) g");
    }

    private Map<String, String> properties(String updateMode)
    {
        Map<String, String> properties = pipeline.properties("public.measurements");
        properties.put("source.publish.via.partition.root", "true");
        properties.put("target.update.mode", updateMode);
        properties.put("flush.interval.ms", "200");
        // several chunks: ctid ranges of the root read every partition
        properties.put("initial.load.chunk.bytes", Long.toString(1024 * 1024));
        return properties;
    }

    private void awaitEqual(RunningService running)
    {
        pipeline.awaitEqual(running, ROWS, CATCH_UP);
    }

    private void change()
            throws Exception
    {
        source.execute("INSERT INTO public.measurements VALUES (30001, 'east', 1, 'new'), (30002, 'west', 2, 'new'), (30003, 'north', 3, 'new')",
                "UPDATE public.measurements SET v = v + 1000, note = 'updated' WHERE id <= 10",
                "DELETE FROM public.measurements WHERE id BETWEEN 11 AND 20",
                // a partition-key change: the row moves from measurements_east to measurements_west
                "UPDATE public.measurements SET region = 'west', note = 'moved' WHERE id IN (22, 24)",
                "UPDATE public.measurements SET region = 'east', note = 'moved back' WHERE id = 30003");
    }

    @ParameterizedTest
    @ValueSource(strings = {"auto", "delete-insert"})
    void writesIntoAPartitionedTargetThroughItsParent(String updateMode)
            throws Exception
    {
        // partitioned by range of id, unlike the source: the target routes every row itself
        target.execute("CREATE TABLE public.measurements (id int, region text, v int, note text, PRIMARY KEY (id, region)) PARTITION BY RANGE (id)",
                "CREATE TABLE public.measurements_low PARTITION OF public.measurements FOR VALUES FROM (MINVALUE) TO (1000)",
                "CREATE TABLE public.measurements_high PARTITION OF public.measurements FOR VALUES FROM (1000) TO (MAXVALUE)");
        try (RunningService running = RunningService.start(properties(updateMode))) {
            awaitEqual(running);
            change();
            awaitEqual(running);
            running.assertRunning();
        }
        assertThat(target.query("SELECT tableoid::regclass::text, count(*) FROM public.measurements GROUP BY 1 ORDER BY 1"))
                .containsExactly(List.of("measurements_high", Integer.toString(source.query("SELECT 1 FROM public.measurements WHERE id >= 1000").size())),
                        List.of("measurements_low", Integer.toString(source.query("SELECT 1 FROM public.measurements WHERE id < 1000").size())));
        assertThat(target.query("SELECT id, region, note FROM public.measurements WHERE note LIKE 'moved%' ORDER BY id"))
                .containsExactly(List.of("22", "west", "moved"), List.of("24", "west", "moved"), List.of("30003", "east", "moved back"));
        // the root read in several chunks (ctid ranges select rows of every partition)
        assertThat(target.query("SELECT count(*) FROM public.pgsink_initial_load WHERE sink_name = '" + sinkName + "' AND source_table = 'measurements' AND chunk >= 0"))
                .satisfies(rows -> assertThat(Long.parseLong(rows.get(0).get(0))).isGreaterThan(1));
        // MERGE updates rows in place (in their partitions); delete-insert never updates
        String updated = "SELECT coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname IN ('measurements_low', 'measurements_high')";
        if (updateMode.equals("auto")) {
            RunningService.await("the statistics of the service's updates", CATCH_UP, () -> assertThat(Long.parseLong(target.query(updated).get(0).get(0))).isGreaterThan(0));
        }
        else {
            assertThat(target.query(updated)).containsExactly(List.of("0"));
        }
        // the root, not its partitions, is published and captured
        assertThat(source.query("SELECT pubviaroot FROM pg_publication")).containsExactly(List.of("t"));
        assertThat(source.query("SELECT tablename FROM pg_publication_tables")).containsExactly(List.of("measurements"));
    }

    @Test
    void aMissingTargetIsCreatedAsAnOrdinaryTable()
            throws Exception
    {
        Map<String, String> properties = properties("auto");
        properties.put("schema.evolution", "add-columns");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running);
            change();
            awaitEqual(running);
            running.assertRunning();
        }
        assertThat(target.query("SELECT relkind FROM pg_class WHERE oid = 'public.measurements'::regclass")).containsExactly(List.of("r"));
        assertThat(target.query("SELECT count(*) FROM pg_index WHERE indrelid = 'public.measurements'::regclass AND indisprimary")).containsExactly(List.of("1"));
    }
}
