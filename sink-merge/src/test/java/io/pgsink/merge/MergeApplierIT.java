package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.Batch;
import io.pgsink.core.BufferedSink;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.Operation;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableId;
import io.pgsink.core.TableSchema;
import io.pgsink.core.UnavailableValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MergeApplierIT
{
    private TestingSchema schema;
    private final List<AutoCloseable> sinks = new ArrayList<>();

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.get().createSchema("merge");
    }

    @AfterEach
    void closeSinks()
            throws Exception
    {
        for (AutoCloseable sink : sinks) {
            sink.close();
        }
        sinks.clear();
        // nothing leaked: every sink connection is closed again
        assertThat(TestingSink.openConnections(schema)).isZero();
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        if (schema != null) {
            schema.close();
        }
    }

    private BufferedSink sink(Map<String, String> overrides)
    {
        BufferedSink sink = TestingSink.sink(schema, overrides);
        sinks.add(sink);
        return sink;
    }

    private static SourcePosition at(long offset)
    {
        return new SourcePosition("{\"server\":\"src\"}", "{\"lsn\":" + offset + "}");
    }

    @Test
    void appliesInsertsUpdatesDeletesAndStoresPosition()
            throws SQLException
    {
        schema.execute("CREATE TABLE orders (id bigint PRIMARY KEY, status text, amount numeric(10,2), note text)");
        TableSchema orders = TableSchema.of(TableId.of("src", "orders"), List.of("id", "status", "amount", "note"), List.of("id"));
        try (BufferedSink sink = sink(Map.of("sink.name", "basic"))) {
            sink.accept(ChangeEvent.insert(orders, new Object[] {1L, "new", new java.math.BigDecimal("10.50"), "a,b"}, at(1), 0));
            sink.accept(ChangeEvent.insert(orders, new Object[] {2L, "new", null, ""}, at(2), 0));
            sink.accept(ChangeEvent.insert(orders, new Object[] {3L, "new", null, null}, at(3), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(orders, null, new Object[] {1L, "paid", new java.math.BigDecimal("10.50"), "a,b"}, at(4), 0));
            sink.accept(ChangeEvent.delete(orders, new Object[] {2L, null, null, null}, at(5), 0));
            sink.accept(ChangeEvent.update(orders, new Object[] {3L, null, null, null}, new Object[] {30L, "moved", null, "line1\nline2"}, at(6), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, status, amount, note FROM orders ORDER BY id")).containsExactly(
                List.of("1", "paid", "10.50", "a,b"),
                java.util.Arrays.asList("30", "moved", null, "line1\nline2"));
        assertThat(TestingSink.query(schema, "SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'basic'"))
                .containsExactly(List.of("{\"server\":\"src\"}", "{\"lsn\":6}"));

        try (MergeApplier applier = new MergeApplier(TestingSink.config(schema, Map.of("sink.name", "basic")))) {
            assertThat(applier.committedPositions()).containsExactly(Map.entry("{\"server\":\"src\"}", at(6)));
        }
    }

    @Test
    void truncateAppliesAtItsPlaceInTheStream()
            throws SQLException
    {
        schema.execute("CREATE TABLE events (id int PRIMARY KEY, v text)", "INSERT INTO events VALUES (100, 'old'), (101, 'old')");
        TableSchema events = TableSchema.of(TableId.of("src", "events"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(events, new Object[] {1, "before truncate"}, at(1), 0));
            sink.accept(ChangeEvent.truncate(TableId.of("src", "events"), at(2), 0));
            sink.accept(ChangeEvent.insert(events, new Object[] {2, "after truncate"}, at(3), 0));
            sink.flush();
            sink.accept(ChangeEvent.truncate(TableId.of("src", "events"), at(4), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM events")).containsExactly(List.of("0"));
    }

    @Test
    void replayingABatchGivesTheSameState()
            throws SQLException
    {
        schema.execute("CREATE TABLE replay (id int PRIMARY KEY, v text)", "INSERT INTO replay VALUES (1, 'one'), (2, 'two')");
        TableSchema replay = TableSchema.of(TableId.of("src", "replay"), List.of("id", "v"), List.of("id"));
        List<Batch> batches = new ArrayList<>();
        try (MergeApplier applier = new MergeApplier(TestingSink.config(schema, Map.of()));
                BufferedSink sink = new BufferedSink("replay", new io.pgsink.core.FlushPolicy(1000, Long.MAX_VALUE, 0), new RecordingApplier(applier, batches))) {
            sink.accept(ChangeEvent.insert(replay, new Object[] {3, "three"}, at(1), 0));
            sink.accept(ChangeEvent.update(replay, null, new Object[] {1, "uno"}, at(2), 0));
            sink.accept(ChangeEvent.delete(replay, new Object[] {2, null}, at(3), 0));
            sink.flush();
            List<List<String>> once = TestingSink.query(schema, "SELECT * FROM replay ORDER BY id");
            applier.apply(batches.get(0));
            applier.apply(batches.get(0));
            assertThat(TestingSink.query(schema, "SELECT * FROM replay ORDER BY id")).isEqualTo(once).containsExactly(List.of("1", "uno"), List.of("3", "three"));
        }
    }

    @Test
    void compositeKeysAndSeveralTablesInOneTransaction()
            throws SQLException
    {
        schema.execute("CREATE TABLE lines (order_id bigint, line int, sku text, PRIMARY KEY (order_id, line))", "CREATE TABLE heads (id bigint PRIMARY KEY, total int)");
        TableSchema lines = TableSchema.of(TableId.of("src", "lines"), List.of("order_id", "line", "sku"), List.of("order_id", "line"));
        TableSchema heads = TableSchema.of(TableId.of("src", "heads"), List.of("id", "total"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            for (long order = 1; order <= 3; order++) {
                sink.accept(ChangeEvent.insert(heads, new Object[] {order, 0}, at(order), 0));
                for (int line = 1; line <= 3; line++) {
                    sink.accept(ChangeEvent.insert(lines, new Object[] {order, line, "sku" + order + line}, at(order), 0));
                }
            }
            sink.flush();
            sink.accept(ChangeEvent.delete(lines, new Object[] {2L, 2, null}, at(10), 0));
            sink.accept(ChangeEvent.update(lines, new Object[] {3L, 1, null}, new Object[] {3L, 9, "moved"}, at(11), 0));
            sink.accept(ChangeEvent.update(heads, null, new Object[] {1L, 42}, at(12), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT order_id, line, sku FROM lines ORDER BY 1, 2")).containsExactly(
                List.of("1", "1", "sku11"), List.of("1", "2", "sku12"), List.of("1", "3", "sku13"),
                List.of("2", "1", "sku21"), List.of("2", "3", "sku23"),
                List.of("3", "2", "sku32"), List.of("3", "3", "sku33"), List.of("3", "9", "moved"));
        assertThat(TestingSink.query(schema, "SELECT id, total FROM heads ORDER BY 1")).containsExactly(List.of("1", "42"), List.of("2", "0"), List.of("3", "0"));
    }

    @Test
    void unusualIdentifiersAreQuotedEverywhere()
            throws SQLException
    {
        String weirdSchema = "Weird \"Schema\" ü";
        schema.execute("CREATE SCHEMA \"Weird \"\"Schema\"\" ü\"",
                "CREATE TABLE \"Weird \"\"Schema\"\" ü\".\"Order Lines \"\"x\"\" 表\" (\"Id\" int, \"select\" text, \"sp ace\" text, \"qu\"\"ote\" text, \"ünï\" text, PRIMARY KEY (\"Id\", \"select\"))");
        try {
            TableSchema weird = TableSchema.of(TableId.of("src", "Order Lines \"x\" 表"), List.of("Id", "select", "sp ace", "qu\"ote", "ünï"), List.of("Id", "select"));
            try (BufferedSink sink = sink(Map.of(SinkConfig.TARGET_TABLE_NAME_FORMAT, weirdSchema + ".${table}"))) {
                sink.accept(ChangeEvent.insert(weird, new Object[] {1, "from", "a b", "\"q\"", "ü"}, at(1), 0));
                sink.accept(ChangeEvent.insert(weird, new Object[] {2, "where", "c", "d", "e"}, at(2), 0));
                sink.flush();
                sink.accept(ChangeEvent.update(weird, null, new Object[] {1, "from", "changed", "\"q\"", "ü"}, at(3), 0));
                sink.accept(ChangeEvent.delete(weird, new Object[] {2, "where", null, null, null}, at(4), 0));
                sink.flush();
            }
            assertThat(TestingSink.query(schema, "SELECT * FROM \"Weird \"\"Schema\"\" ü\".\"Order Lines \"\"x\"\" 表\""))
                    .containsExactly(List.of("1", "from", "changed", "\"q\"", "ü"));
        }
        finally {
            schema.execute("DROP SCHEMA \"Weird \"\"Schema\"\" ü\" CASCADE");
        }
    }

    @Test
    void unchangedToastValuesAreTakenFromTheTarget()
            throws SQLException
    {
        schema.execute("CREATE TABLE docs (id int PRIMARY KEY, title text, body text, meta jsonb)",
                "INSERT INTO docs VALUES (1, 't1', repeat('x', 100000), '{\"a\": 1}'), (2, 't2', repeat('y', 100000), '{\"b\": 2}')");
        TableSchema docs = TableSchema.of(TableId.of("src", "docs"), List.of("id", "title", "body", "meta"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(docs, null, new Object[] {1, "t1 changed", UnavailableValue.INSTANCE, UnavailableValue.INSTANCE}, at(1), 0));
            sink.accept(ChangeEvent.update(docs, null, new Object[] {2, "t2 changed", UnavailableValue.INSTANCE, "{\"b\": 3}"}, at(2), 0));
            sink.accept(ChangeEvent.update(docs, null, new Object[] {2, "t2 twice", UnavailableValue.INSTANCE, UnavailableValue.INSTANCE}, at(3), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, title, md5(body) = md5(repeat(CASE id WHEN 1 THEN 'x' ELSE 'y' END, 100000)), meta::text FROM docs ORDER BY id"))
                .containsExactly(List.of("1", "t1 changed", "t", "{\"a\": 1}"), List.of("2", "t2 twice", "t", "{\"b\": 3}"));
    }

    @Test
    void keyChangeTakesUnchangedToastValuesFromTheOldKeysTargetRow()
            throws SQLException
    {
        schema.execute("CREATE TABLE moved (tenant int, id int, title text, body text, PRIMARY KEY (id, tenant))",
                "INSERT INTO moved VALUES (1, 1, 'one', repeat('a', 50000)), (1, 2, 'two', repeat('b', 50000)), (1, 3, 'three', repeat('c', 50000))");
        // the source's key order differs from the target's: (tenant, id) against PRIMARY KEY (id, tenant)
        TableSchema moved = TableSchema.of(TableId.of("src", "moved"), List.of("tenant", "id", "title", "body"), List.of("tenant", "id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(moved, new Object[] {1, 1, null, null}, new Object[] {1, 10, "one moved", UnavailableValue.INSTANCE}, at(1), 0));
            sink.acceptKeyChange(ChangeEvent.delete(moved, new Object[] {1, 2, null, null}, at(2), 0),
                    ChangeEvent.insert(moved, new Object[] {2, 2, "two moved tenant", UnavailableValue.INSTANCE}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT tenant, id, title, left(body, 3), length(body) FROM moved ORDER BY tenant, id")).containsExactly(
                List.of("1", "3", "three", "ccc", "50000"),
                List.of("1", "10", "one moved", "aaa", "50000"),
                List.of("2", "2", "two moved tenant", "bbb", "50000"));
    }

    @Test
    void unchangedToastValueWithoutTargetRowFailsNamingKeyAndColumn()
            throws SQLException
    {
        schema.execute("CREATE TABLE toasty (id int PRIMARY KEY, body text)");
        TableSchema toasty = TableSchema.of(TableId.of("src", "toasty"), List.of("id", "body"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(toasty, null, new Object[] {7, UnavailableValue.INSTANCE}, at(1), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("\"toasty\"")
                    .hasMessageContaining("key (7) column(s) [body]")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA);
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM toasty")).containsExactly(List.of("0"));
    }

    @Test
    void stagingTableIsCreatedOncePerConnection()
            throws SQLException
    {
        schema.execute("CREATE TABLE reuse (id int PRIMARY KEY, v text)");
        TableSchema reuse = TableSchema.of(TableId.of("src", "reuse"), List.of("id", "v"), List.of("id"));
        try (MergeApplier applier = new MergeApplier(TestingSink.config(schema, Map.of()));
                BufferedSink sink = new BufferedSink("reuse", new io.pgsink.core.FlushPolicy(1000, Long.MAX_VALUE, 0), applier)) {
            for (int flush = 0; flush < 5; flush++) {
                sink.accept(ChangeEvent.insert(reuse, new Object[] {flush, "v"}, at(flush), 0));
                sink.flush();
            }
            assertThat(TestingSink.query(schema, "SELECT count(*) FROM pg_class WHERE relname LIKE 'pgsink_stage_%' AND relpersistence = 't'")).containsExactly(List.of("1"));
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM reuse")).containsExactly(List.of("5"));
    }

    @Test
    void stagingTablesLostBySessionAreCreatedAgain()
            throws SQLException
    {
        schema.execute("CREATE TABLE lost (id int PRIMARY KEY, v text)", "INSERT INTO lost VALUES (1, 'one')");
        TableSchema lost = TableSchema.of(TableId.of("src", "lost"), List.of("id", "v"), List.of("id"));
        List<Connection> connections = new ArrayList<>();
        SinkConfig config = TestingSink.config(schema, Map.of());
        TargetConnector connector = () -> {
            Connection connection = TargetConnector.fromConfig(config).connect();
            connections.add(connection);
            return connection;
        };
        try (BufferedSink sink = new BufferedSink("lost", config.flushPolicy(), new MergeApplier(config, connector))) {
            sink.accept(ChangeEvent.update(lost, null, new Object[] {1, "uno"}, at(1), 0));
            sink.flush();
            // what a Greenplum gang reset does to the session's temporary tables
            execute(connections.get(0), "DISCARD TEMP");
            connections.get(0).commit();
            sink.accept(ChangeEvent.update(lost, null, new Object[] {1, "eins"}, at(2), 0));
            sink.accept(ChangeEvent.delete(lost, new Object[] {7, null}, at(3), 0));
            sink.flush();
        }
        assertThat(connections).hasSize(1);
        assertThat(TestingSink.query(schema, "SELECT id, v FROM lost")).containsExactly(List.of("1", "eins"));
    }

    @Test
    void rejectedValueNamesTableKeyAndColumnButNotTheValue()
            throws SQLException
    {
        schema.execute("CREATE TABLE narrow (id int PRIMARY KEY, code varchar(3))");
        TableSchema narrow = TableSchema.of(TableId.of("src", "narrow"), List.of("id", "code"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(narrow, new Object[] {1, "ok"}, at(1), 0));
            sink.accept(ChangeEvent.insert(narrow, new Object[] {2, "secret-too-long"}, at(2), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("\"narrow\" key (2) column code")
                    .hasMessageContaining("value too long for type character varying(3)")
                    .hasMessageContaining("offset {\"lsn\":2}")
                    .hasMessageNotContaining("secret-too-long")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA);
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM narrow")).containsExactly(List.of("0"));
    }

    @Test
    void nulCharacterFailsOrIsStripped()
            throws SQLException
    {
        schema.execute("CREATE TABLE nul (id int PRIMARY KEY, v text)");
        TableSchema nul = TableSchema.of(TableId.of("src", "nul"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(nul, new Object[] {1, "a\u0000b"}, at(1), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("\"nul\" key (1) column v (text)")
                    .hasMessageContaining("NUL");
        }
        try (BufferedSink sink = sink(Map.of(SinkConfig.COPY_NUL_CHARACTER, "strip"))) {
            sink.accept(ChangeEvent.insert(nul, new Object[] {1, "a\u0000b"}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT v FROM nul")).containsExactly(List.of("ab"));
    }

    @Test
    void schemaProblemsAreNamed()
            throws SQLException
    {
        schema.execute("CREATE TABLE nokey (id int, v text)", "CREATE TABLE fewer (id int PRIMARY KEY)");
        TableSchema missingTable = TableSchema.of(TableId.of("src", "absent"), List.of("id"), List.of("id"));
        TableSchema noKeyTarget = TableSchema.of(TableId.of("src", "nokey"), List.of("id", "v"), List.of("id"));
        TableSchema extraColumn = TableSchema.of(TableId.of("src", "fewer"), List.of("id", "added"), List.of("id"));
        TableSchema keylessSource = TableSchema.of(TableId.of("src", "nokey"), List.of("id", "v"), List.of());
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(missingTable, new Object[] {1}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("Target table \"" + schema.name() + "\".\"absent\" does not exist");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(noKeyTarget, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("the target table has no primary key").hasMessageContaining("PRIMARY KEY (id)");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(extraColumn, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("target has no column(s) [added]");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("the source table has no primary key").hasMessageContaining("tables.without.key=append-only");
        }
        try (BufferedSink sink = sink(Map.of(SinkConfig.TABLES_WITHOUT_KEY, "append-only"))) {
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(1), 0));
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, v FROM nokey")).containsExactly(List.of("1", "a"), List.of("1", "a"));
    }

    @Test
    void readOperationsAreUpserts()
            throws SQLException
    {
        schema.execute("CREATE TABLE snap (id int PRIMARY KEY, v text)", "INSERT INTO snap VALUES (1, 'stale')");
        TableSchema snap = TableSchema.of(TableId.of("src", "snap"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(snap, Operation.READ, new Object[] {1, "fresh"}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT v FROM snap")).containsExactly(List.of("fresh"));
    }

    /** Remembers the batches it applies, so a test can replay them. */
    private record RecordingApplier(MergeApplier delegate, List<Batch> batches)
            implements io.pgsink.core.BatchApplier
    {
        @Override
        public void apply(Batch batch)
        {
            batches.add(batch);
            delegate.apply(batch);
        }

        @Override
        public Map<String, SourcePosition> committedPositions()
        {
            return delegate.committedPositions();
        }

        @Override
        public void close() {}
    }

    static void execute(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
