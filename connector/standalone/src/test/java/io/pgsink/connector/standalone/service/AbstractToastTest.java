package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Unchanged TOASTed values through Debezium, end to end. With {@code REPLICA IDENTITY DEFAULT} an
 * update that leaves a large text, jsonb or bytea value alone carries Debezium's
 * {@code __debezium_unavailable_value} placeholder instead of it; the target must keep the value,
 * whether it comes from an earlier image in the same batch or from the target row.
 */
abstract class AbstractToastTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);

    /** md5 of every large column, so a placeholder or a truncated value shows as a difference. */
    private static final String ROWS = "SELECT id, n, length(body), md5(body), md5(doc::text), md5(blob) FROM public.docs ORDER BY id";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("toast", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    @BeforeEach
    void createTables()
            throws Exception
    {
        String table = "CREATE TABLE public.docs (id int PRIMARY KEY, n int, body text, doc jsonb, blob bytea)";
        target.execute(table);
        source.execute(table,
                // EXTERNAL: stored out of line without compression, so every value below is TOASTed
                "ALTER TABLE public.docs ALTER body SET STORAGE EXTERNAL, ALTER doc SET STORAGE EXTERNAL, ALTER blob SET STORAGE EXTERNAL",
                "CREATE FUNCTION big(seed int) RETURNS text LANGUAGE sql AS $$ SELECT string_agg(md5((seed * 1000 + g)::text), '') FROM generate_series(1, 300) g $$");
        assertThat(source.query("SELECT relreplident FROM pg_class WHERE oid = 'public.docs'::regclass")).containsExactly(List.of("d"));
    }

    private static String insert(int id)
    {
        return "INSERT INTO public.docs VALUES (" + id + ", 0, big(" + id + "), jsonb_build_object('k', big(" + id + ")), decode(big(" + id + "), 'hex'))";
    }

    private static String touch(int id)
    {
        return "UPDATE public.docs SET n = n + 1 WHERE id = " + id;
    }

    private void inOneTransaction(String... sql)
            throws Exception
    {
        try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            for (String each : sql) {
                statement.execute(each);
            }
            connection.commit();
        }
    }

    private void awaitEqual(RunningService running)
            throws Exception
    {
        pipeline.awaitEqual(running, ROWS, CATCH_UP);
    }

    private Map<String, String> properties()
    {
        Map<String, String> properties = pipeline.properties("public.docs");
        properties.put("flush.interval.ms", "200");
        return properties;
    }

    @Test
    void unchangedToastedValuesKeepTheirValueInTheTarget()
            throws Exception
    {
        // through the snapshot
        source.execute(insert(1));
        try (RunningService running = RunningService.start(properties())) {
            source.execute(insert(4), insert(5), insert(6));
            awaitEqual(running);

            // a small source transaction usually arrives in one engine batch: the value comes from the
            // insert's image in the buffer (from the target row otherwise; the result is the same)
            inOneTransaction(insert(2), touch(2), touch(2));
            // inserted, updated, deleted in one batch: gone
            inOneTransaction(insert(3), touch(3), "DELETE FROM public.docs WHERE id = 3");
            // updated twice, in two transactions: the value comes from the target row
            source.execute(touch(1));
            source.execute(touch(1));
            inOneTransaction(touch(4), touch(4));
            // updated then deleted, in one batch and in two
            inOneTransaction(touch(5), "DELETE FROM public.docs WHERE id = 5");
            source.execute(touch(6));
            source.execute("DELETE FROM public.docs WHERE id = 6");
            // a later insert of a deleted key gets its new value, and then keeps it
            source.execute(insert(6).replace("big(6)", "big(60)"), touch(6));
            awaitEqual(running);

            // key changes (Debezium: a delete of the old key, then a create of the new key with the
            // placeholder): the value comes from the old key's target row, or from the buffer
            source.execute("UPDATE public.docs SET id = 104 WHERE id = 4");
            inOneTransaction(insert(7), touch(7), "UPDATE public.docs SET id = 107 WHERE id = 7");
            inOneTransaction("UPDATE public.docs SET id = 201 WHERE id = 1", touch(201), "UPDATE public.docs SET id = 301 WHERE id = 201");
            awaitEqual(running);
            running.assertRunning();
        }
        assertThat(target.query("SELECT id, n FROM public.docs ORDER BY id")).containsExactly(List.of("2", "2"), List.of("6", "1"), List.of("104", "2"), List.of("107", "1"), List.of("301", "3"));
        assertThat(target.query("SELECT count(*) FROM public.docs WHERE body LIKE '%debezium_unavailable%' OR doc::text LIKE '%debezium_unavailable%' OR position('__debezium'::bytea IN blob) > 0"))
                .containsExactly(List.of("0"));
        assertThat(target.query("SELECT DISTINCT length(body), length(doc->>'k'), length(blob) FROM public.docs")).containsExactly(List.of("9600", "9600", "4800"));
    }

    /**
     * With one record per engine batch, the delete and the create of every key change arrive in two
     * batches (each its own flush): the create still takes the old key's values, from its target row.
     */
    @Test
    void keyChangesOfToastedRowsSplitAcrossEngineBatches()
            throws Exception
    {
        source.execute(insert(1), insert(2));
        Map<String, String> properties = properties();
        properties.put("flush.max.events", "1");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running);
            source.execute("UPDATE public.docs SET id = 101 WHERE id = 1");
            inOneTransaction("UPDATE public.docs SET id = 102 WHERE id = 2", "UPDATE public.docs SET id = 202, n = 5 WHERE id = 102", insert(3), "UPDATE public.docs SET id = 103 WHERE id = 3");
            awaitEqual(running);
            running.assertRunning();
        }
        assertThat(target.query("SELECT id, n FROM public.docs ORDER BY id")).containsExactly(List.of("101", "0"), List.of("103", "0"), List.of("202", "5"));
        assertThat(target.query("SELECT DISTINCT length(body), length(doc->>'k'), length(blob) FROM public.docs")).containsExactly(List.of("9600", "9600", "4800"));
    }
}
