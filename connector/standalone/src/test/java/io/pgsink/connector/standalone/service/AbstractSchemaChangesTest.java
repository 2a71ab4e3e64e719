package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Arrays;
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

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("ddl", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    private Map<String, String> configuration(String includeList)
    {
        Map<String, String> properties = pipeline.properties(includeList);
        properties.put("schema.evolution", "add-columns");
        return properties;
    }

    private void awaitEqual(RunningService running, String query)
    {
        pipeline.awaitEqual(running, query, CATCH_UP);
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

    /**
     * A column added with a stable function default ({@code now()}) holds one value in every row
     * that existed before: the source catalog has it ({@code attmissingval}), the target gets it.
     * One added with a volatile default ({@code random()}) holds a value per row that nothing
     * carries to the sink: it stops naming table, column and what to do, and goes on once the
     * column is in the target.
     */
    @Test
    void columnsAddedWithAFunctionDefaultHoldTheSourceValuesOrStop()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.functions (id int PRIMARY KEY, a text)",
                "INSERT INTO public.functions SELECT g, 'a' || g FROM generate_series(1, 5) g");
        Map<String, String> properties = configuration("public.functions");
        RunningService running = RunningService.start(properties);
        try {
            awaitEqual(running, "SELECT id, a FROM public.functions ORDER BY id");
            source.execute(
                    "ALTER TABLE public.functions ADD COLUMN t timestamptz DEFAULT now(), ADD COLUMN u text DEFAULT current_user",
                    "INSERT INTO public.functions (id, a) VALUES (6, 'a6')");
            awaitEqual(running, "SELECT id, a, t, u FROM public.functions ORDER BY id");
            // the target column has no default: the value was the one of the moment it was added
            assertThat(target.query("SELECT count(*) FROM pg_attrdef WHERE adrelid = 'public.functions'::regclass")).containsExactly(List.of("0"));

            source.execute(
                    "ALTER TABLE public.functions ADD COLUMN r float8 DEFAULT random()",
                    "INSERT INTO public.functions (id, a) VALUES (7, 'a7')");
            Throwable failure = running.awaitFailure(CATCH_UP);
            assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH));
            assertThat(failure.getMessage()).isEqualTo("Cannot add column(s) [r (float8 DEFAULT random())] of \"public\".\"functions\" to \"public\".\"functions\":"
                    + " their default on the source is computed, not a constant, and was not evaluated once when they were added (a volatile default such as random()"
                    + " or nextval() gives every row its own value), so rows that existed before hold values that no change event carries and the target cannot compute; add the column(s) to the target yourself (ALTER TABLE \"public\".\"functions\""
                    + " ADD COLUMN ...), fill them with the source's values for the existing keys, and restart.");
        }
        finally {
            running.service().close();
        }
        assertThat(target.query("SELECT count(*) FROM public.functions WHERE id = 7")).containsExactly(List.of("0"));

        // as the message says: the column in the target with the source's values, then a restart
        target.execute("ALTER TABLE public.functions ADD COLUMN r float8");
        for (List<String> row : source.query("SELECT id, r FROM public.functions WHERE id <= 6")) {
            target.execute("UPDATE public.functions SET r = " + row.get(1) + " WHERE id = " + row.get(0));
        }
        try (RunningService restarted = RunningService.start(properties)) {
            source.execute("UPDATE public.functions SET a = 'changed' WHERE id = 1");
            awaitEqual(restarted, "SELECT id, a, t, u, r FROM public.functions ORDER BY id");
            restarted.assertRunning();
        }
    }

    /**
     * A renamed source column is renamed in the target (the source catalog tells it from a drop and
     * an add: same attribute number); a column dropped and another added between two changes of the
     * table stay a drop and an add.
     */
    @Test
    void renamedColumnsAreRenamedInTheTarget()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.renamed (id int PRIMARY KEY, a text, k int, z int)",
                "INSERT INTO public.renamed SELECT g, 'a' || g, g, g FROM generate_series(1, 5) g");
        try (RunningService running = RunningService.start(configuration("public.renamed"))) {
            awaitEqual(running, "SELECT id, a, k, z FROM public.renamed ORDER BY id");
            source.execute(
                    "ALTER TABLE public.renamed RENAME COLUMN a TO \"B b\"",
                    "ALTER TABLE public.renamed RENAME COLUMN z TO y",
                    "INSERT INTO public.renamed VALUES (6, 'a6', 6, 6)",
                    "UPDATE public.renamed SET \"B b\" = 'changed' WHERE id = 2");
            awaitEqual(running, "SELECT id, \"B b\", k, y FROM public.renamed ORDER BY id");
            assertThat(columns(target)).isEqualTo(columns(source));

            // a drop and an add between two changes: not a rename
            source.execute(
                    "ALTER TABLE public.renamed DROP COLUMN k",
                    "ALTER TABLE public.renamed ADD COLUMN n int",
                    "INSERT INTO public.renamed VALUES (7, 'a7', 7, 7)");
            awaitEqual(running, "SELECT id, \"B b\", y, n FROM public.renamed ORDER BY id");
            assertThat(target.query("SELECT id, k FROM public.renamed WHERE id IN (5, 7) ORDER BY id")).containsExactly(List.of("5", "5"), Arrays.asList("7", null));
            running.assertRunning();
        }
        assertThat(columns(target)).containsExactly("id", "B b", "k", "y", "n");
    }

    /**
     * A rename pgsink did not see happen (while it was stopped) cannot be told from a drop and an
     * add: it stops, naming both ways to go on.
     */
    @Test
    void aRenameWhileStoppedStopsTheSink()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.renamed (id int PRIMARY KEY, a text)",
                "INSERT INTO public.renamed SELECT g, 'a' || g FROM generate_series(1, 3) g");
        Map<String, String> properties = configuration("public.renamed");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, "SELECT id, a FROM public.renamed ORDER BY id");
        }
        source.execute("ALTER TABLE public.renamed RENAME COLUMN a TO b", "INSERT INTO public.renamed VALUES (4, 'a4')");
        RunningService running = RunningService.start(properties);
        Throwable failure;
        try {
            failure = running.awaitFailure(CATCH_UP);
        }
        finally {
            running.service().close();
        }
        assertThat(failure.getMessage()).isEqualTo("Cannot tell whether column(s) [b] of \"public\".\"renamed\" are column(s) [a] of \"public\".\"renamed\" renamed on the source,"
                + " or were added while those were dropped: pgsink does not know which columns the source had before (the change happened while it was stopped, or a column is in the target only)."
                + " If renamed, rename them in the target (ALTER TABLE \"public\".\"renamed\" RENAME COLUMN ... TO ...); if not, add them to the target yourself"
                + " (ALTER TABLE \"public\".\"renamed\" ADD COLUMN ...); then restart.");
        target.execute("ALTER TABLE public.renamed RENAME COLUMN a TO b");
        try (RunningService restarted = RunningService.start(properties)) {
            awaitEqual(restarted, "SELECT id, b FROM public.renamed ORDER BY id");
            restarted.assertRunning();
        }
    }

    private static List<String> columns(TestingDatabase database)
            throws Exception
    {
        return database.query("SELECT attname FROM pg_attribute WHERE attrelid = 'public.renamed'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum")
                .stream().map(row -> row.get(0)).toList();
    }

    /**
     * {@code schema.evolution=add-columns-and-widen}: safe widenings and a dropped NOT NULL are
     * applied to the target; {@code timestamp} to {@code timestamptz} is not safe and stops.
     */
    @Test
    void safeWideningsAreAppliedAndUnsafeTypeChangesStop()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.widened (id int PRIMARY KEY, i int2, v varchar(5), n numeric(6,2), f float4, s varchar(8), nn text NOT NULL, ts timestamp)",
                "INSERT INTO public.widened SELECT g, g, 'v' || g, g + 0.25, g + 0.5, 's' || g, 'nn' || g, '2024-01-01 10:00' FROM generate_series(1, 5) g");
        Map<String, String> properties = configuration("public.widened");
        properties.put("schema.evolution", "add-columns-and-widen");
        RunningService running = RunningService.start(properties);
        Throwable failure;
        try {
            String rows = "SELECT id, i, v, n, f, s, nn, ts FROM public.widened ORDER BY id";
            awaitEqual(running, rows);
            // NOT NULL as on the source, as a target made by hand would have it (pgsink creates only key columns NOT NULL)
            target.execute("ALTER TABLE public.widened ALTER COLUMN nn SET NOT NULL");
            source.execute(
                    "ALTER TABLE public.widened ALTER COLUMN i TYPE int8, ALTER COLUMN v TYPE varchar(50), ALTER COLUMN n TYPE numeric(12,4),"
                            + " ALTER COLUMN f TYPE float8, ALTER COLUMN s TYPE text, ALTER COLUMN nn DROP NOT NULL",
                    "INSERT INTO public.widened VALUES (6, 9000000000, repeat('v', 50), 12345678.1234, 1.000000000001, repeat('s', 100), NULL, '2024-01-02 10:00')");
            awaitEqual(running, rows);
            assertThat(target.query("SELECT attname, format_type(atttypid, atttypmod), attnotnull FROM pg_attribute WHERE attrelid = 'public.widened'::regclass"
                    + " AND attname IN ('i', 'v', 'n', 'f', 's', 'nn') ORDER BY attnum"))
                    .containsExactly(List.of("i", "bigint", "f"), List.of("v", "character varying(50)", "f"), List.of("n", "numeric(12,4)", "f"),
                            List.of("f", "double precision", "f"), List.of("s", "text", "f"), List.of("nn", "text", "f"));

            source.execute(
                    "ALTER TABLE public.widened ALTER COLUMN ts TYPE timestamptz",
                    "INSERT INTO public.widened VALUES (7, 7, 'v7', 7, 7, 's7', 'nn7', '2024-01-03 10:00+00')");
            failure = running.awaitFailure(CATCH_UP);
        }
        finally {
            running.service().close();
        }
        assertThat(failure.getMessage()).isEqualTo("Incompatible type change in \"public\".\"widened\": ts changed from timestamp to timestamptz but is timestamp without time zone in the target."
                + " Change the target column type (ALTER TABLE \"public\".\"widened\" ALTER COLUMN ... TYPE ...) and restart the sink.");
        assertThat(target.query("SELECT count(*) FROM public.widened WHERE id = 7")).containsExactly(List.of("0"));
    }

    /**
     * {@code publication.autocreate.mode=filtered} adds tables to the publication only when Debezium
     * starts: a table created while streaming is not streamed, and the next start would add it and
     * lose its rows so far. So that start stops, naming the table and what to do; done, it streams.
     */
    @Test
    void aTableCreatedWhileStreamingIntoAFilteredPublicationStopsTheNextStart()
            throws Exception
    {
        source.execute("CREATE TABLE public.early (id int PRIMARY KEY, v text)", "INSERT INTO public.early VALUES (1, 'one')");
        Map<String, String> properties = configuration("public\\.(early|late)");
        String publication = properties.get("sink.name");
        try (RunningService running = RunningService.start(properties)) {
            // once Debezium polls, the initial load and the publication check after it are done, and a
            // change can only arrive streamed (a table created before that check stops this start
            // instead, see docs/concepts/schema-changes.md). The offsets table is no sign of it: the writer's claim fills it first.
            RunningService.await("streaming", CATCH_UP, () -> assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING));
            source.execute("INSERT INTO public.early VALUES (2, 'two')");
            awaitEqual(running, "SELECT id, v FROM public.early ORDER BY id");
            source.execute(
                    "CREATE TABLE public.late (id int PRIMARY KEY, v text)",
                    "INSERT INTO public.late VALUES (1, 'written while streaming')",
                    "INSERT INTO public.early VALUES (3, 'three')");
            awaitEqual(running, "SELECT id, v FROM public.early ORDER BY id");
            running.assertRunning();
        }
        RunningService restarted = RunningService.start(properties);
        Throwable failure;
        try {
            failure = restarted.awaitFailure(CATCH_UP);
        }
        finally {
            restarted.service().close();
        }
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG));
        assertThat(failure.getMessage()).startsWith("Table(s) [\"public\".\"late\"] match the captured tables but are not in publication " + publication
                + ": they were created (or created again) while pgsink loaded or streamed with source.publication.autocreate.mode=filtered");

        // as the message says: into the publication, rows copied by hand, started again
        source.execute("ALTER PUBLICATION " + publication + " ADD TABLE public.late");
        target.execute("CREATE TABLE public.late (id int PRIMARY KEY, v text)");
        for (List<String> row : source.query("SELECT id, v FROM public.late")) {
            target.execute("INSERT INTO public.late VALUES (" + row.get(0) + ", '" + row.get(1) + "')");
        }
        try (RunningService running = RunningService.start(properties)) {
            source.execute("INSERT INTO public.late VALUES (2, 'after')", "UPDATE public.late SET v = 'changed' WHERE id = 1");
            awaitEqual(running, "SELECT id, v FROM public.late ORDER BY id");
            running.assertRunning();
        }
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
        // name ending in a double quote: Debezium leaves it unquoted in CREATE PUBLICATION (see docs/concepts/type-mapping.md)
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
