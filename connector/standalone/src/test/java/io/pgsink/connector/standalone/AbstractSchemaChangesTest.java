package io.pgsink.connector.standalone;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Source DDL while Debezium streams, with {@code schema.evolution=add-columns}: a missing target
 * table is created, added columns appear in the target with their values, a dropped column stays in
 * the target (NULL in rows written after the drop), and an incompatible type change stops the sink.
 * Also identifiers that need quoting everywhere, end to end.
 */
abstract class AbstractSchemaChangesTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);

    private TestingDatabase source;
    private TestingDatabase target;

    /** The server the target database is created on; the source is always the test PostgreSQL. */
    protected abstract TestingPostgreSqlServer targetServer();

    @BeforeEach
    void createDatabases()
            throws Exception
    {
        source = TestingDatabase.create("pgsink_ddl_source");
        target = TestingDatabase.create(targetServer(), "pgsink_ddl_target");
    }

    @AfterEach
    void dropDatabases()
            throws Exception
    {
        source.close();
        target.close();
    }

    private Map<String, String> configuration(String includeList)
    {
        Map<String, String> properties = new HashMap<>();
        properties.putAll(source.sourceProperties());
        properties.putAll(target.targetProperties());
        properties.put("source.table.include.list", includeList);
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", TestingDatabase.randomName("ddl"));
        properties.put("flush.interval.ms", "100");
        properties.put("http.port", "-1");
        properties.put("target.jdbc.ApplicationName", "pgsink-connector-it");
        properties.put("schema.evolution", "add-columns");
        return properties;
    }

    private void awaitEqual(RunningService running, String query)
            throws Exception
    {
        RunningService.await("target to equal source: " + query, CATCH_UP, () -> {
            running.assertRunning();
            assertThat(target.query(query)).isEqualTo(source.query(query));
        });
    }

    @Test
    void followsAddedDroppedAndRetypedSourceColumnsWhileStreaming()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.evolving (id int PRIMARY KEY, a text, b int)",
                "INSERT INTO public.evolving SELECT g, 'a' || g, g FROM generate_series(1, 10) g",
                "CREATE TABLE public.created (k1 text, k2 int, v text, PRIMARY KEY (k2, k1))",
                "INSERT INTO public.created VALUES ('x', 1, 'one'), ('y', 2, 'two')");
        // the same columns as the source in another order: values go by name, never by position
        target.execute("CREATE TABLE public.evolving (b int, a text, id int PRIMARY KEY)");

        RunningService running = RunningService.start(configuration("public.evolving,public.created"));
        String evolving = "SELECT id, a, b FROM public.evolving ORDER BY id";
        awaitEqual(running, evolving);
        awaitEqual(running, "SELECT k1, k2, v FROM public.created ORDER BY k2");
        // created from the source: key from the source key, in its order
        assertThat(target.query("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'public.created'::regclass AND contype = 'p'"))
                .containsExactly(List.of("PRIMARY KEY (k2, k1)"));

        // added columns, between and after changes of existing rows
        source.execute(
                "ALTER TABLE public.evolving ADD COLUMN c numeric(10,2), ADD COLUMN \"D e\" text[]",
                "INSERT INTO public.evolving VALUES (11, 'a11', 11, 1.25, '{x,\"y z\"}'), (12, NULL, NULL, NULL, NULL)",
                "UPDATE public.evolving SET c = id * 0.5 WHERE id <= 3",
                "ALTER TABLE public.created ADD COLUMN w jsonb",
                "INSERT INTO public.created VALUES ('z', 3, 'three', '{\"a\": [1]}')");
        String withAdded = "SELECT id, a, b, c, \"D e\" FROM public.evolving ORDER BY id";
        awaitEqual(running, withAdded);
        awaitEqual(running, "SELECT k1, k2, v, w FROM public.created ORDER BY k2");
        assertThat(target.query("SELECT c, \"D e\"::text FROM public.evolving WHERE id = 11")).containsExactly(List.of("1.25", "{x,\"y z\"}"));
        assertThat(target.query("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'public.evolving'::regclass AND attname IN ('c', 'D e') ORDER BY attnum"))
                .containsExactly(List.of("numeric(10,2)"), List.of("text[]"));

        // a dropped column stays in the target, NULL in rows written from then on
        source.execute(
                "ALTER TABLE public.evolving DROP COLUMN b",
                "INSERT INTO public.evolving VALUES (13, 'a13', 13.00, NULL)",
                "UPDATE public.evolving SET a = 'changed' WHERE id = 4");
        String withoutB = "SELECT id, a, c, \"D e\" FROM public.evolving ORDER BY id";
        awaitEqual(running, withoutB);
        assertThat(target.query("SELECT id, b FROM public.evolving WHERE id IN (4, 5, 13) ORDER BY id"))
                .containsExactly(Arrays.asList("4", null), List.of("5", "5"), Arrays.asList("13", null));

        // an incompatible type change stops the sink with what changed and what to do
        source.execute(
                "ALTER TABLE public.evolving ALTER COLUMN a TYPE int USING length(a)",
                "INSERT INTO public.evolving VALUES (14, 14, NULL, NULL)");
        Throwable failure;
        try {
            failure = running.awaitFailure(CATCH_UP);
        }
        finally {
            running.service().close();
        }
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH));
        assertThat(failure.getMessage())
                .isEqualTo("Incompatible type change in \"public\".\"evolving\": a changed from text to int4 but is text in the target."
                        + " Change the target column type (ALTER TABLE \"public\".\"evolving\" ALTER COLUMN ... TYPE ...) and restart the sink.");
        // nothing of the retyped table was written
        assertThat(target.query("SELECT count(*) FROM public.evolving WHERE id = 14")).containsExactly(List.of("0"));
    }

    /**
     * A column added with a constant default: PostgreSQL fills existing rows without rewriting them
     * (no change events), so the target column gets the same default, and existing rows read it.
     */
    @Test
    void columnsAddedWithAConstantDefaultHoldItInExistingTargetRows()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.defaults (id int PRIMARY KEY, a text)",
                "INSERT INTO public.defaults SELECT g, 'a' || g FROM generate_series(1, 5) g");
        try (RunningService running = RunningService.start(configuration("public.defaults"))) {
            awaitEqual(running, "SELECT id, a FROM public.defaults ORDER BY id");
            source.execute(
                    "ALTER TABLE public.defaults ADD COLUMN n int DEFAULT 42, ADD COLUMN s text NOT NULL DEFAULT 'it''s', ADD COLUMN d date DEFAULT '2024-02-29',"
                            + " ADD COLUMN m numeric(8,3) DEFAULT 12.5, ADD COLUMN f boolean DEFAULT true, ADD COLUMN plain int",
                    "INSERT INTO public.defaults (id, a) VALUES (6, 'a6')",
                    "INSERT INTO public.defaults VALUES (7, 'a7', 7, 'seven', '2000-01-01', 7.125, false, 7)");
            awaitEqual(running, "SELECT id, a, n, s, d, m, f, plain FROM public.defaults ORDER BY id");
            running.assertRunning();
        }
        assertThat(target.query("SELECT count(*) FROM public.defaults WHERE n = 42 AND s = 'it''s' AND d = '2024-02-29' AND m = 12.5 AND f AND plain IS NULL"))
                .containsExactly(List.of("6"));
        assertThat(target.query("SELECT attname, pg_get_expr(adbin, adrelid) FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum"
                + " WHERE adrelid = 'public.defaults'::regclass ORDER BY attnum"))
                .containsExactly(List.of("n", "42"), List.of("s", "'it''s'::text"), List.of("d", "'2024-02-29'::date"), List.of("m", "12.500::numeric(8,3)"), List.of("f", "true"));
    }

    @Test
    void identifiersThatNeedQuotingWorkEndToEnd()
            throws Exception
    {
        String schema = "Mixed \"Schema\".ü";
        String table = "Order Lines.v1 ✓";
        String qualified = quote(schema) + "." + quote(table);
        source.execute(
                "CREATE SCHEMA " + quote(schema),
                "CREATE TABLE " + qualified + " (\"ID\" int, \"select\" text, \"a b\" int, \"quo\"\"te\" text, \"dot.ted\" text, \"ünï😀\" text, \"user\" int,"
                        + " PRIMARY KEY (\"ID\", \"select\"))",
                "INSERT INTO " + qualified + " VALUES (1, 'from', 1, 'q', 'd', 'u', 1), (2, 'where', 2, NULL, NULL, NULL, NULL)");
        // the same identifiers in a target table created beforehand and in one pgsink creates. Not a
        // name ending in a double quote: Debezium leaves it unquoted in CREATE PUBLICATION (see README)
        String existing = quote("Existing \"T\" 1");
        source.execute("CREATE TABLE public." + existing + " (\"Key\" int PRIMARY KEY, \"Value\" text)", "INSERT INTO public." + existing + " VALUES (1, 'one')");
        target.execute("CREATE TABLE public." + existing + " (\"Value\" text, \"Key\" int PRIMARY KEY)");

        // table.include.list holds regular expressions matched against schema.table, unquoted
        String includeList = java.util.regex.Pattern.quote(schema + "." + table) + "," + java.util.regex.Pattern.quote("public.Existing \"T\" 1");
        try (RunningService running = RunningService.start(configuration(includeList))) {
            String rows = "SELECT * FROM " + qualified + " ORDER BY 1, 2";
            awaitEqual(running, rows);
            awaitEqual(running, "SELECT \"Key\", \"Value\" FROM public." + existing + " ORDER BY 1");
            source.execute(
                    "INSERT INTO " + qualified + " VALUES (3, 'group', 3, '\"', '.', '✓', 3)",
                    "UPDATE " + qualified + " SET \"a b\" = 20, \"quo\"\"te\" = 'x\"y' WHERE \"ID\" = 2",
                    "UPDATE " + qualified + " SET \"select\" = 'order' WHERE \"ID\" = 1",
                    "DELETE FROM " + qualified + " WHERE \"ID\" = 3",
                    "ALTER TABLE " + qualified + " ADD COLUMN \"New \"\"Col\"\".😀\" text",
                    "INSERT INTO " + qualified + " VALUES (4, 'table', 4, NULL, NULL, NULL, 4, 'new')",
                    "UPDATE public." + existing + " SET \"Value\" = 'uno'",
                    "INSERT INTO public." + existing + " VALUES (2, 'two')");
            awaitEqual(running, rows);
            awaitEqual(running, "SELECT \"Key\", \"Value\" FROM public." + existing + " ORDER BY 1");
            assertThat(target.query("SELECT \"ID\", \"select\", \"New \"\"Col\"\".😀\" FROM " + qualified + " ORDER BY 1"))
                    .containsExactly(Arrays.asList("1", "order", null), Arrays.asList("2", "where", null), List.of("4", "table", "new"));
            running.assertRunning();
        }
    }

    /**
     * A Debezium limit, shown as it is: Debezium writes a table name that ends in a double quote
     * unquoted into its own SQL (CREATE PUBLICATION with publication.autocreate.mode=filtered, the
     * snapshot's SELECT) and cannot parse it back while streaming, so such a table cannot be
     * captured at all. Even with a publication made by hand and no snapshot, the table's changes
     * never reach the sink.
     */
    @Test
    void debeziumCannotCaptureATableWhoseNameEndsInADoubleQuote()
            throws Exception
    {
        String table = "public." + quote("Ends \"Q\"");
        source.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v text)");
        target.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v text)");
        Map<String, String> properties = configuration(java.util.regex.Pattern.quote("public.Ends \"Q\""));
        source.execute("CREATE PUBLICATION " + properties.get("sink.name") + " FOR TABLE " + table);
        properties.put("source.publication.autocreate.mode", "disabled");
        properties.put("source.snapshot.mode", "no_data");
        RunningService running = RunningService.start(properties);
        RunningService.await("the replication slot", CATCH_UP, () -> assertThat(source.replicationSlots()).hasSize(1));
        source.execute("INSERT INTO " + table + " VALUES (1, 'one')");
        // mostly the stream stops at the change (TableIdParser: Unexpected input: "); in some runs
        // the change is just never delivered. Either way nothing arrives
        Throwable failure = null;
        try {
            failure = running.awaitFailure(Duration.ofSeconds(20));
        }
        catch (AssertionError stillRunning) {
            // the service still runs after 20 s without having applied the row
        }
        finally {
            running.service().close();
        }
        if (failure != null) {
            assertThat(failure).hasMessageContaining("An exception occurred in the change event producer");
            assertThat(failure).rootCause().isInstanceOf(IllegalArgumentException.class).hasMessage("Unexpected input: \"");
        }
        assertThat(target.query("SELECT count(*) FROM " + table)).containsExactly(List.of("0"));
    }

    private static String quote(String identifier)
    {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }
}
