package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.session.TargetConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What a flush must do on every target database: the change-stream, TOAST, truncate, replay and
 * staging-table cases. One subclass per target: {@link MergeApplierIT} (PostgreSQL),
 * {@link GreenplumDialectOnPostgreSqlIT} (the Greenplum dialect's statements run on PostgreSQL),
 * and the Greenplum tests ({@link AbstractGreenplumMergeTest}: the cluster at PGSINK_TEST_GREENPLUM_URL, or containers).
 *
 * <p>Each class works in its own schema, created before and dropped after it; every test checks
 * that its sinks closed their connections.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractMergeTest
        implements ChangeMetadataCases, UniqueIndexCases
{
    private static final String[] TEXTS = {"", "plain", "comma,separated", "quote\"d", "new\nline", "\\. alone", "back\\slash", "ünïcødé 🚀", "tab\tx", "\r\ncrlf"};

    protected TestingSchema schema;
    private final List<AutoCloseable> sinks = new ArrayList<>();
    /** The role the sinks' sessions take where the suite's sink user may not UPDATE ({@link #suiteMayUpdate()}). */
    private Optional<TestingRoleWithoutUpdate> roleWithoutUpdate = Optional.empty();

    /** The server the suite runs against; asked once, before the first test. */
    protected abstract TestingPostgreSqlServer server();

    /** The dialect the sink must detect on {@link #server()}. */
    protected abstract Dialect expectedDialect();

    /** Configuration every sink of the suite gets, under the test's own. */
    protected Map<String, String> targetProperties()
    {
        return Map.of();
    }

    /**
     * How the sinks connect to the target, as the suite's sink user; a subclass may look at or
     * change what they send.
     */
    protected TargetConnector connector(SinkConfig config)
    {
        TargetConnector connector = TargetConnector.fromConfig(config);
        return roleWithoutUpdate.map(role -> role.connector(connector)).orElse(connector);
    }

    /**
     * Creates a table of the test schema ({@code name} as SQL: plain, quoted or qualified) with the
     * column and key definitions given, distributed by {@code distributedBy} where the database
     * distributes tables (by the primary key when none are given, as Greenplum does).
     */
    protected void createTable(String name, String definitions, String... distributedBy)
            throws SQLException
    {
        schema.execute("CREATE TABLE " + name + " (" + definitions + ")");
        tableCreated(name);
    }

    /** To be called by every {@link #createTable}: grants the suite's sink user what it may do with the table. */
    protected final void tableCreated(String name)
            throws SQLException
    {
        if (roleWithoutUpdate.isPresent()) {
            // tables of other schemas than the test's
            roleWithoutUpdate.get().grantOn(schema, name);
        }
    }

    /** Events in {@link #randomStreamEqualsReferenceModel()}; the last quarter of them is delivered twice. */
    protected int streamEvents()
    {
        return 200_000;
    }

    /** Called after the schema is dropped, when the suite is done with {@link #server()}. */
    protected void stopServer() {}

    @BeforeAll
    void createSchema()
            throws SQLException
    {
        schema = server().createSchema("merge");
        if (!suiteMayUpdate()) {
            roleWithoutUpdate = Optional.of(TestingRoleWithoutUpdate.create(schema));
        }
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
        TestingSink.awaitNoOpenConnections(schema);
    }

    @AfterAll
    void dropSchema()
            throws SQLException
    {
        try {
            if (schema != null) {
                schema.close();
            }
        }
        finally {
            try {
                // the schema is gone: what else the role owns or was granted, then the role
                roleWithoutUpdate.ifPresent(role -> role.drop(server()));
            }
            finally {
                stopServer();
            }
        }
    }

    protected SinkConfig config(Map<String, String> overrides)
    {
        Map<String, String> properties = new HashMap<>(targetProperties());
        properties.putAll(overrides);
        return TestingSink.config(schema, properties);
    }

    protected MergeApplier applier(Map<String, String> overrides)
    {
        SinkConfig config = config(overrides);
        return new MergeApplier(config, connector(config));
    }

    /** A sink closed after the test. */
    protected BufferedSink sink(Map<String, String> overrides)
    {
        SinkConfig config = config(overrides);
        BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config, connector(config)));
        sinks.add(sink);
        return sink;
    }

    @Override
    public TestingSchema suiteSchema()
    {
        return schema;
    }

    @Override
    public BufferedSink suiteSink(Map<String, String> overrides)
    {
        return sink(overrides);
    }

    @Override
    public void suiteTable(String name, String definitions)
            throws SQLException
    {
        createTable(name, definitions);
    }

    @Override
    public void suiteTable(String name, String definitions, String distributedBy)
            throws SQLException
    {
        createTable(name, definitions, distributedBy);
    }

    protected static SourcePosition at(long offset)
    {
        return new SourcePosition("{\"server\":\"src\"}", "{\"lsn\":" + offset + "}");
    }

    protected static void execute(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    @Test
    void detectsTheTargetDialect()
            throws SQLException
    {
        createTable("detect", "id int PRIMARY KEY");
        TableSchema detect = TableSchema.of(TableId.of("src", "detect"), List.of("id"), List.of("id"));
        try (MergeApplier applier = applier(Map.of());
                BufferedSink sink = new BufferedSink("detect", new FlushPolicy(1000, Long.MAX_VALUE, 0), applier)) {
            sink.accept(ChangeEvent.insert(detect, new Object[] {1}, at(1), 0));
            sink.flush();
            assertThat(applier.dialect()).isSameAs(expectedDialect());
        }
    }

    @Test
    void appliesInsertsUpdatesDeletesAndStoresPosition()
            throws SQLException
    {
        createTable("orders", "id bigint PRIMARY KEY, status text, amount numeric(10,2), note text");
        TableSchema orders = TableSchema.of(TableId.of("src", "orders"), List.of("id", "status", "amount", "note"), List.of("id"));
        try (BufferedSink sink = sink(Map.of("sink.name", "basic"))) {
            sink.accept(ChangeEvent.insert(orders, new Object[] {1L, "new", new BigDecimal("10.50"), "a,b"}, at(1), 0));
            sink.accept(ChangeEvent.insert(orders, new Object[] {2L, "new", null, ""}, at(2), 0));
            sink.accept(ChangeEvent.insert(orders, new Object[] {3L, "new", null, null}, at(3), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(orders, null, new Object[] {1L, "paid", new BigDecimal("10.50"), "a,b"}, at(4), 0));
            sink.accept(ChangeEvent.delete(orders, new Object[] {2L, null, null, null}, at(5), 0));
            sink.accept(ChangeEvent.update(orders, new Object[] {3L, null, null, null}, new Object[] {30L, "moved", null, "line1\nline2"}, at(6), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, status, amount, note FROM orders ORDER BY id")).containsExactly(
                List.of("1", "paid", "10.50", "a,b"),
                Arrays.asList("30", "moved", null, "line1\nline2"));
        assertThat(TestingSink.query(schema, "SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'basic'"))
                .containsExactly(List.of("{\"server\":\"src\"}", "{\"lsn\":6}"));

        try (MergeApplier applier = applier(Map.of("sink.name", "basic"))) {
            assertThat(applier.committedPositions()).containsExactly(Map.entry("{\"server\":\"src\"}", at(6)));
        }
    }

    @Test
    void truncateAppliesAtItsPlaceInTheStream()
            throws SQLException
    {
        createTable("events", "id int PRIMARY KEY, v text");
        schema.execute("INSERT INTO events VALUES (100, 'old'), (101, 'old')");
        TableSchema events = TableSchema.of(TableId.of("src", "events"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(events, new Object[] {1, "before truncate"}, at(1), 0));
            sink.accept(ChangeEvent.truncate(TableId.of("src", "events"), at(2), 0));
            sink.accept(ChangeEvent.insert(events, new Object[] {2, "after truncate"}, at(3), 0));
            sink.flush();
            assertThat(TestingSink.query(schema, "SELECT id, v FROM events")).containsExactly(List.of("2", "after truncate"));
            sink.accept(ChangeEvent.truncate(TableId.of("src", "events"), at(4), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM events")).containsExactly(List.of("0"));
    }

    @Test
    void replayingABatchGivesTheSameState()
            throws SQLException
    {
        createTable("replay", "id int PRIMARY KEY, v text");
        schema.execute("INSERT INTO replay VALUES (1, 'one'), (2, 'two')");
        TableSchema replay = TableSchema.of(TableId.of("src", "replay"), List.of("id", "v"), List.of("id"));
        List<Batch> batches = new ArrayList<>();
        try (MergeApplier applier = applier(Map.of());
                BufferedSink sink = new BufferedSink("replay", new FlushPolicy(1000, Long.MAX_VALUE, 0), new RecordingApplier(applier, batches))) {
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
        // distributed by part of the key: every line of an order on the segment of its order
        createTable("lines", "order_id bigint, line int, sku text, PRIMARY KEY (order_id, line)", "order_id");
        createTable("heads", "id bigint PRIMARY KEY, total int");
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
            // a key change to another order: on Greenplum, to another segment
            sink.accept(ChangeEvent.update(lines, new Object[] {1L, 3, null}, new Object[] {4L, 1, "other order"}, at(12), 0));
            sink.accept(ChangeEvent.update(heads, null, new Object[] {1L, 42}, at(13), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT order_id, line, sku FROM lines ORDER BY 1, 2")).containsExactly(
                List.of("1", "1", "sku11"), List.of("1", "2", "sku12"),
                List.of("2", "1", "sku21"), List.of("2", "3", "sku23"),
                List.of("3", "2", "sku32"), List.of("3", "3", "sku33"), List.of("3", "9", "moved"),
                List.of("4", "1", "other order"));
        assertThat(TestingSink.query(schema, "SELECT id, total FROM heads ORDER BY 1")).containsExactly(List.of("1", "42"), List.of("2", "0"), List.of("3", "0"));
    }

    @Test
    void unusualIdentifiersAreQuotedEverywhere()
            throws SQLException
    {
        String weirdSchema = "Weird \"Schema\" ü";
        String table = "\"Weird \"\"Schema\"\" ü\".\"Order Lines \"\"x\"\" 表\"";
        schema.execute("CREATE SCHEMA \"Weird \"\"Schema\"\" ü\"");
        try {
            createTable(table, "\"Id\" int, \"select\" text, \"sp ace\" text, \"qu\"\"ote\" text, \"ünï\" text, PRIMARY KEY (\"Id\", \"select\")", "select");
            TableSchema weird = TableSchema.of(TableId.of("src", "Order Lines \"x\" 表"), List.of("Id", "select", "sp ace", "qu\"ote", "ünï"), List.of("Id", "select"));
            try (BufferedSink sink = sink(Map.of(SinkConfig.TARGET_TABLE_NAME_FORMAT, weirdSchema + ".${table}"))) {
                sink.accept(ChangeEvent.insert(weird, new Object[] {1, "from", "a b", "\"q\"", "ü"}, at(1), 0));
                sink.accept(ChangeEvent.insert(weird, new Object[] {2, "where", "c", "d", "e"}, at(2), 0));
                sink.flush();
                sink.accept(ChangeEvent.update(weird, null, new Object[] {1, "from", "changed", "\"q\"", "ü"}, at(3), 0));
                sink.accept(ChangeEvent.delete(weird, new Object[] {2, "where", null, null, null}, at(4), 0));
                sink.flush();
            }
            assertThat(TestingSink.query(schema, "SELECT * FROM " + table)).containsExactly(List.of("1", "from", "changed", "\"q\"", "ü"));
        }
        finally {
            schema.execute("DROP SCHEMA \"Weird \"\"Schema\"\" ü\" CASCADE");
        }
    }

    @Test
    void unchangedToastValuesAreTakenFromTheTarget()
            throws SQLException
    {
        createTable("docs", "id int PRIMARY KEY, title text, body text, meta jsonb");
        schema.execute("INSERT INTO docs VALUES (1, 't1', repeat('x', 100000), '{\"a\": 1}'), (2, 't2', repeat('y', 100000), '{\"b\": 2}')");
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
        // distributed by tenant: the key change to tenant 2 moves the row to another segment
        createTable("moved", "tenant int, id int, title text, body text, PRIMARY KEY (id, tenant)", "tenant");
        schema.execute("INSERT INTO moved VALUES (1, 1, 'one', repeat('a', 50000)), (1, 2, 'two', repeat('b', 50000)), (1, 3, 'three', repeat('c', 50000))");
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
        createTable("toasty", "id int PRIMARY KEY, body text");
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
        createTable("reuse", "id int PRIMARY KEY, v text");
        TableSchema reuse = TableSchema.of(TableId.of("src", "reuse"), List.of("id", "v"), List.of("id"));
        try (MergeApplier applier = applier(Map.of());
                BufferedSink sink = new BufferedSink("reuse", new FlushPolicy(1000, Long.MAX_VALUE, 0), applier)) {
            for (int flush = 0; flush < 5; flush++) {
                sink.accept(ChangeEvent.insert(reuse, new Object[] {flush, "v"}, at(flush), 0));
                sink.accept(ChangeEvent.update(reuse, null, new Object[] {flush, "updated"}, at(flush), 0));
                sink.accept(ChangeEvent.delete(reuse, new Object[] {flush - 1, null}, at(flush), 0));
                sink.flush();
            }
            assertThat(TestingSink.query(schema, "SELECT count(*) FROM pg_class WHERE relname LIKE 'pgsink\\_stage\\_%\\_reuse' AND relpersistence = 't'")).containsExactly(List.of("1"));
        }
        assertThat(TestingSink.query(schema, "SELECT id, v FROM reuse")).containsExactly(List.of("4", "updated"));
    }

    @Test
    void stagingTablesLostBySessionAreCreatedAgain()
            throws SQLException
    {
        createTable("lost", "id int PRIMARY KEY, v text");
        schema.execute("INSERT INTO lost VALUES (1, 'one')");
        TableSchema lost = TableSchema.of(TableId.of("src", "lost"), List.of("id", "v"), List.of("id"));
        List<Connection> connections = new ArrayList<>();
        SinkConfig config = config(Map.of());
        TargetConnector connector = () -> {
            Connection connection = connector(config).connect();
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
    void readOperationsAreUpserts()
            throws SQLException
    {
        createTable("snap", "id int PRIMARY KEY, v text");
        schema.execute("INSERT INTO snap VALUES (1, 'stale')");
        TableSchema snap = TableSchema.of(TableId.of("src", "snap"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(snap, Operation.READ, new Object[] {1, "fresh"}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT v FROM snap")).containsExactly(List.of("fresh"));
    }

    @Test
    void createsMissingTablesWithSchemaEvolution()
            throws SQLException
    {
        TableSchema created = new TableSchema(TableId.of("src", "created"),
                List.of(new ColumnSchema("region", "int4", false), new ColumnSchema("id", "int8", false), new ColumnSchema("label", "text", true)),
                List.of("region", "id"));
        try (BufferedSink sink = sink(Map.of(SinkConfig.SCHEMA_EVOLUTION, "add-columns"))) {
            sink.accept(ChangeEvent.insert(created, new Object[] {1, 1L, "one"}, at(1), 0));
            sink.accept(ChangeEvent.insert(created, new Object[] {2, 2L, "two"}, at(2), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(created, null, new Object[] {1, 1L, "uno"}, at(3), 0));
            sink.accept(ChangeEvent.delete(created, new Object[] {2, 2L, null}, at(4), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT region, id, label FROM created")).containsExactly(List.of("1", "1", "uno"));
    }

    /**
     * A random stream (inserts, repeated updates, deletes, key changes, a truncate) applied in
     * several flushes leaves the target equal, row by row, to a reference model that applies each
     * event in turn; and delivering the last quarter of the events a second time (at-least-once
     * upstream) changes nothing.
     */
    @Test
    void randomStreamEqualsReferenceModel()
            throws SQLException
    {
        createTable("items", "id bigint PRIMARY KEY, qty integer, label text, price numeric(12,2), active boolean");
        int events = streamEvents();
        Random random = new Random(20261123);
        TableSchema items = TableSchema.of(TableId.of("src", "items"), List.of("id", "qty", "label", "price", "active"), List.of("id"));
        TreeMap<Long, Object[]> model = new TreeMap<>();
        List<Long> keys = new ArrayList<>();
        long nextKey = 1;
        int truncateAt = events * 2 / 3;
        List<ChangeEvent> stream = new ArrayList<>(events);
        String flushSize = String.valueOf(Math.max(1000, events / 12));
        try (BufferedSink sink = sink(Map.of(SinkConfig.FLUSH_MAX_EVENTS, flushSize, SinkConfig.FLUSH_INTERVAL_MS, "3600000"))) {
            for (int i = 1; i <= events; i++) {
                SourcePosition position = new SourcePosition("src", String.valueOf(i));
                int dice = random.nextInt(100);
                ChangeEvent event;
                if (i == truncateAt) {
                    event = ChangeEvent.truncate(items.table(), position, 0);
                    model.clear();
                    keys.clear();
                }
                else if (keys.isEmpty() || dice < 40) {
                    long key = nextKey++;
                    Object[] row = randomRow(random, key);
                    event = ChangeEvent.insert(items, random.nextInt(10) == 0 ? Operation.READ : Operation.INSERT, row, position, 0);
                    model.put(key, row.clone());
                    keys.add(key);
                }
                else if (dice < 80) {
                    // updates concentrate on recent keys, so keys are updated repeatedly within a batch
                    long key = keys.get(Math.max(0, keys.size() - 1 - random.nextInt(Math.min(keys.size(), 2000))));
                    Object[] row = randomRow(random, key);
                    event = ChangeEvent.update(items, null, row, position, 0);
                    model.put(key, row.clone());
                }
                else if (dice < 92) {
                    int index = random.nextInt(keys.size());
                    long key = keys.get(index);
                    keys.set(index, keys.get(keys.size() - 1));
                    keys.remove(keys.size() - 1);
                    event = ChangeEvent.delete(items, new Object[] {key, null, null, null, null}, position, 0);
                    model.remove(key);
                }
                else {
                    int index = random.nextInt(keys.size());
                    long oldKey = keys.get(index);
                    long newKey = nextKey++;
                    keys.set(index, newKey);
                    Object[] row = randomRow(random, newKey);
                    event = ChangeEvent.update(items, new Object[] {oldKey, null, null, null, null}, row, position, 0);
                    model.remove(oldKey);
                    model.put(newKey, row.clone());
                }
                stream.add(event);
                sink.accept(event);
            }
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("src", new SourcePosition("src", String.valueOf(events)));
        }
        assertTargetEquals(model);

        // at-least-once upstream: the last quarter of the events arrives again, in other batch boundaries
        String replayFlushSize = String.valueOf(Math.max(1000, events / 22));
        try (BufferedSink sink = sink(Map.of(SinkConfig.FLUSH_MAX_EVENTS, replayFlushSize, SinkConfig.FLUSH_INTERVAL_MS, "3600000"))) {
            for (ChangeEvent event : stream.subList(events - events / 4, events)) {
                sink.accept(event);
            }
            sink.flush();
        }
        assertTargetEquals(model);
    }

    private void assertTargetEquals(TreeMap<Long, Object[]> model)
            throws SQLException
    {
        List<List<String>> expected = new ArrayList<>();
        for (Object[] row : model.values()) {
            expected.add(Arrays.asList(row[0].toString(), text(row[1]), text(row[2]), text(row[3]), row[4] == null ? null : row[4].toString()));
        }
        List<List<String>> actual = TestingSink.query(schema, "SELECT id::text, qty::text, label, price::text, active::text FROM items ORDER BY id");
        assertThat(actual).hasSize(expected.size());
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i)).as("row %s", i).isEqualTo(expected.get(i));
        }
        assertThat(expected.size()).isGreaterThan(1000);
    }

    private static String text(Object value)
    {
        return value == null ? null : value instanceof BigDecimal decimal ? decimal.toPlainString() : value.toString();
    }

    private static Object[] randomRow(Random random, long key)
    {
        Integer qty = random.nextInt(20) == 0 ? null : random.nextInt();
        String label = random.nextInt(20) == 0 ? null : TEXTS[random.nextInt(TEXTS.length)] + random.nextInt(1000);
        BigDecimal price = random.nextInt(20) == 0 ? null : BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2);
        Boolean active = random.nextInt(20) == 0 ? null : random.nextBoolean();
        return new Object[] {key, qty, label, price, active};
    }

    /** Remembers the batches it applies, so a test can replay them. */
    private record RecordingApplier(MergeApplier delegate, List<Batch> batches)
            implements BatchApplier
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
}
