package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.schema.TargetCatalog;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.SourceTableStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The merge suite with {@code target.dialect=greenplum} against PostgreSQL: every statement the
 * Greenplum dialect generates runs on a real server, with only its {@code DISTRIBUTED} clauses cut
 * off on the way (PostgreSQL has no such clause), and the distribution keys the sink reads come
 * from a {@code gp_distribution_policy} table of Greenplum's shape in the test schema (and an empty
 * {@code pg_appendonly}). This checks
 * what can be checked without a Greenplum: the statements' syntax and effect (DELETE USING,
 * offsets written by UPDATE then INSERT), the catalog query on an {@code int2vector} distribution
 * key, the distribution key checks, and that the staging tables are created {@code DISTRIBUTED
 * BY} the key the catalog gives. Greenplum's own behaviour (segments, gang resets) is left to the
 * container tests.
 */
class GreenplumDialectOnPostgreSqlIT
        extends AbstractMergeTest
{
    /** A distribution clause at the end of a CREATE TABLE, identifiers quoted or not. */
    private static final Pattern DISTRIBUTED = Pattern.compile("\\s+DISTRIBUTED\\s+(?:RANDOMLY|REPLICATED|BY\\s*\\((?:\"(?:[^\"]|\"\")*\"|[^()\"])*\\))\\s*$",
            Pattern.CASE_INSENSITIVE);

    /** Every statement the sinks sent through JDBC (not COPY), as the dialect generated it. */
    private final List<String> sent = Collections.synchronizedList(new ArrayList<>());

    @Override
    protected TestingPostgreSqlServer server()
    {
        return TestingPostgreSqlServer.target();
    }

    @Override
    protected Dialect expectedDialect()
    {
        return Dialect.GREENPLUM;
    }

    /**
     * Whether the suite's sinks upsert, as on Greenplum 7 ({@code target.update.mode=auto}: PostgreSQL
     * 15 says version 15, for which the dialect upserts); here they delete and insert, as Greenplum 6
     * does. The upsert path runs in {@link GreenplumDialectUpsertOnPostgreSqlIT}, and in
     * GreenplumMergeIT on a real cluster.
     */
    protected boolean upserts()
    {
        return false;
    }

    @Override
    protected Map<String, String> targetProperties()
    {
        // the sink's sessions find the stand-in catalog table in the test schema
        return Map.of(SinkConfig.TARGET_DIALECT, "greenplum", SinkConfig.TARGET_JDBC_PREFIX + "currentSchema",
                schema.name(), SinkConfig.TARGET_UPDATE_MODE, upserts() ? "auto" : "delete-insert");
    }

    @Override
    protected TargetConnector connector(SinkConfig config)
    {
        TargetConnector connector = TargetConnector.fromConfig(config);
        return () -> withoutDistribution(connector.connect(), sent);
    }

    @Override
    protected int streamEvents()
    {
        return 50_000;
    }

    /** Creates the table as Greenplum would, and records its distribution key as Greenplum's catalog would. */
    @Override
    protected void createTable(String name, String definitions, String... distributedBy)
            throws SQLException
    {
        super.createTable(name, definitions);
        distribute(name, distributedBy);
    }

    /** Registers {@code columns} (the primary key when none are given) as the distribution key of {@code table}, in that order. */
    private void distribute(String table, String... columns)
            throws SQLException
    {
        try (Connection connection = schema.connect();
                PreparedStatement insert = connection.prepareStatement("""
                        INSERT INTO gp_distribution_policy (localoid, policytype, numsegments, distkey, distclass)
                        SELECT c.oid, 'p', 2,
                               coalesce((SELECT string_agg(a.attnum::text, ' ' ORDER BY k.position)
                                         FROM unnest(CASE WHEN cardinality(?::text[]) > 0 THEN ?::text[] ELSE ARRAY(
                                                  SELECT pa.attname::text
                                                  FROM pg_index i
                                                  CROSS JOIN generate_subscripts(i.indkey, 1) AS p(position)
                                                  JOIN pg_attribute pa ON pa.attrelid = i.indrelid AND pa.attnum = i.indkey[p.position]
                                                  WHERE i.indrelid = c.oid AND i.indisprimary
                                                  ORDER BY p.position) END) WITH ORDINALITY AS k(name, position)
                                         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = k.name), '')::int2vector,
                               ''::oidvector
                        FROM pg_class c
                        WHERE c.oid = ?::regclass""")) {
            insert.setArray(1, connection.createArrayOf("text", columns));
            insert.setArray(2, connection.createArrayOf("text", columns));
            insert.setString(3, table);
            assertThat(insert.executeUpdate()).isEqualTo(1);
        }
    }

    @BeforeAll
    void createCatalogStandIn()
            throws SQLException
    {
        schema.execute("CREATE TABLE gp_distribution_policy (localoid oid PRIMARY KEY, policytype \"char\" NOT NULL, numsegments integer NOT NULL,"
                        + " distkey int2vector NOT NULL, distclass oidvector NOT NULL)",
                // no table is append-optimized
                "CREATE TABLE pg_appendonly (relid oid PRIMARY KEY)");
    }

    @AfterAll
    void nothingGreenplumLacksWasSent()
    {
        assertThat(sent).isNotEmpty();
        if (upserts()) {
            // Greenplum 7 has ON CONFLICT
            return;
        }
        for (String statement : sent) {
            assertThat(statement.toUpperCase(Locale.ROOT)).as(statement).doesNotContain("ON CONFLICT");
        }
    }

    @Test
    void catalogReadsDistributionKeysInKeyOrder()
            throws SQLException
    {
        createTable("spread", "a int, b int, c text, PRIMARY KEY (a, b)", "b", "a");
        createTable("by_key", "a int, b int, c text, PRIMARY KEY (a, b)");
        schema.execute("CREATE TABLE replicated (a int PRIMARY KEY)",
                "INSERT INTO gp_distribution_policy VALUES ('replicated'::regclass, 'r', 2, '', '')");
        try (Connection connection = schema.connect()) {
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "spread"), Dialect.GREENPLUM).orElseThrow().distributionKey()).containsExactly("b", "a");
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "by_key"), Dialect.GREENPLUM).orElseThrow().distributionKey()).containsExactly("a", "b");
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "replicated"), Dialect.GREENPLUM).orElseThrow().distributionKey()).isEmpty();
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "spread"), Dialect.POSTGRESQL).orElseThrow().distributionKey()).isEmpty();
        }
    }

    @Test
    void stagingTablesAreDistributedByTheTargetsDistributionKey()
            throws SQLException
    {
        createTable("shipments", "carrier text, id bigint, state text, PRIMARY KEY (id, carrier)", "carrier");
        TableSchema shipments = TableSchema.of(TableId.of("src", "shipments"), List.of("carrier", "id", "state"), List.of("carrier", "id"));
        int mark = sent.size();
        try (BufferedSink sink = sink(Map.of(SinkConfig.SINK_NAME, "shipments"))) {
            sink.accept(ChangeEvent.insert(shipments, new Object[] {"ups", 1L, "new"}, at(1), 0));
            sink.accept(ChangeEvent.insert(shipments, new Object[] {"dhl", 2L, "new"}, at(2), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(shipments, null, new Object[] {"ups", 1L, "sent"}, at(3), 0));
            sink.accept(ChangeEvent.delete(shipments, new Object[] {"dhl", 2L, null}, at(4), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT carrier, id, state FROM shipments")).containsExactly(List.of("ups", "1", "sent"));
        List<String> statements = sentSince(mark);
        List<String> staging = statements.stream().filter(sql -> sql.startsWith("CREATE TEMPORARY TABLE \"pgsink_stage_") && sql.contains("_shipments\"")).toList();
        assertThat(staging).hasSize(1);
        assertThat(staging.get(0)).endsWith("_shipments\" (\"__pgsink_insert\" boolean NOT NULL, \"__pgsink_unavailable\" text, \"__pgsink_fill_0\" bigint, \"__pgsink_fill_1\" text,"
                + " \"carrier\" text, \"id\" bigint, \"state\" text) ON COMMIT DELETE ROWS DISTRIBUTED BY (\"carrier\")");
        assertThat(statements).anySatisfy(sql -> assertThat(sql).startsWith("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; DELETE FROM \"" + schema.name() + "\".\"shipments\" AS t USING \"pgsink_stage_")
                .contains(" AS s WHERE t.\"id\" = s.\"id\" AND t.\"carrier\" = s.\"carrier\"")
                // the upsert deletes only the staged deletes, then upserts the rest
                .endsWith(upserts() ? "ON CONFLICT (\"id\", \"carrier\") DO UPDATE SET \"state\" = EXCLUDED.\"state\""
                        : " AS s WHERE t.\"id\" = s.\"id\" AND t.\"carrier\" = s.\"carrier\""));
        // the offsets row: inserted by the first flush, updated by the second, never upserted
        assertThat(statements).filteredOn(sql -> sql.contains("pgsink_offsets")).anySatisfy(sql -> assertThat(sql).startsWith("UPDATE ")).anySatisfy(sql -> assertThat(sql).startsWith("INSERT INTO "));
        assertThat(TestingSink.query(schema, "SELECT source_offset FROM pgsink_offsets WHERE sink_name = 'shipments'")).containsExactly(List.of("{\"lsn\":4}"));
        try (MergeApplier applier = applier(Map.of(SinkConfig.SINK_NAME, "shipments"))) {
            assertThat(applier.committedPositions()).containsExactly(Map.entry("{\"server\":\"src\"}", new SourcePosition("{\"server\":\"src\"}", "{\"lsn\":4}")));
        }
    }

    /**
     * A table with only its primary key is upserted where the dialect upserts; one with a unique
     * index beyond it is deleted and inserted whatever the mode ({@link TablePlan#mergeable}).
     */
    @Test
    void uniqueIndexBeyondTheKeyTurnsTheUpsertIntoDeleteAndInsert()
            throws SQLException
    {
        createTable("key_only", "tenant int, id int, email text, PRIMARY KEY (tenant, id)", "tenant");
        createTable("unique_email", "tenant int, id int, email text, PRIMARY KEY (tenant, id), UNIQUE (tenant, email)",
                "tenant");
        int mark = sent.size();
        try (BufferedSink sink = sink(Map.of(SinkConfig.SINK_NAME, "unique_beyond_key"))) {
            for (String table : List.of("key_only", "unique_email")) {
                TableSchema source = TableSchema.of(TableId.of("src", table), List.of("tenant", "id", "email"),
                        List.of("tenant", "id"));
                sink.accept(ChangeEvent.update(source, null, new Object[] {1, 1, "a"}, at(1), 0));
                sink.accept(ChangeEvent.delete(source, new Object[] {1, 2, null}, at(2), 0));
            }
            sink.flush();
        }
        List<String> applied = sentSince(mark).stream().filter(sql -> sql.contains("DELETE FROM")).toList();
        assertThat(applied).filteredOn(sql -> sql.contains("\"key_only\"")).singleElement()
                .satisfies(sql -> assertThat(sql.contains("ON CONFLICT (\"tenant\", \"id\") DO UPDATE"))
                        .isEqualTo(upserts()));
        assertThat(applied).filteredOn(sql -> sql.contains("\"unique_email\"")).singleElement()
                .satisfies(sql -> assertThat(sql).doesNotContain("ON CONFLICT")
                        .endsWith(" AS s WHERE t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\""));
        assertThat(TestingSink.query(schema, "SELECT email FROM unique_email")).containsExactly(List.of("a"));
    }

    @Test
    void distributionKeyOutsideThePrimaryKeyIsRefused()
            throws SQLException
    {
        // Greenplum itself refuses to create such a table; a catalog that says so anyway is refused by the sink
        createTable("misplaced", "id int, region text, v text, PRIMARY KEY (id)", "region");
        TableSchema misplaced = TableSchema.of(TableId.of("src", "misplaced"), List.of("id", "region", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(misplaced, new Object[] {1, "eu", "x"}, at(1), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("the Greenplum distribution key [region] is not part of the primary key [id]")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM misplaced")).containsExactly(List.of("0"));
    }

    @Test
    void theSourceTablesReadingIsReplacedWithPlainStatements()
            throws SQLException
    {
        SinkConfig config = config(Map.of());
        SourceTableStore store = new SourceTableStore(config);
        List<SourceTableStore.StoredTable> reading = List.of(
                new SourceTableStore.StoredTable(16384, TableId.of("public", "parted"), true, 0, Optional.empty(), false),
                new SourceTableStore.StoredTable(16390, TableId.of("public", "parted_east"), false, 16384, Optional.of("FOR VALUES IN ('east')"), false));
        int mark = sent.size();
        try (Connection connection = connector(config).connect()) {
            connection.setAutoCommit(false);
            store.createTable(connection, Dialect.GREENPLUM);
            store.replace(connection, reading);
            connection.commit();
            assertThat(store.read(connection)).containsExactlyElementsOf(reading);
            store.replace(connection, reading.subList(1, 2));
            connection.commit();
            assertThat(store.read(connection)).containsExactly(reading.get(1));
            // the statement a stop names forgets the table
            try (Statement statement = connection.createStatement()) {
                statement.execute(store.forgetStatement(TableId.of("public", "parted_east")));
            }
            assertThat(store.read(connection)).isEmpty();
            connection.commit();
        }
        assertThat(sentSince(mark)).anySatisfy(sql -> assertThat(sql).endsWith(" DISTRIBUTED BY (\"sink_name\", \"table_oid\")"));
    }

    @Test
    void createdTablesAreDistributedByTheirKey()
            throws SQLException
    {
        TableSchema parcels = new TableSchema(TableId.of("src", "parcels"),
                List.of(new ColumnSchema("depot", "int4", false), new ColumnSchema("id", "int8", false), new ColumnSchema("weight", "numeric(8,3)", true)),
                List.of("depot", "id"));
        int mark = sent.size();
        try (BufferedSink sink = sink(Map.of(SinkConfig.SCHEMA_EVOLUTION, "add-columns"))) {
            sink.accept(ChangeEvent.insert(parcels, new Object[] {7, 1L, new BigDecimal("1.250")}, at(1), 0));
            sink.flush();
        }
        assertThat(sentSince(mark)).contains("CREATE TABLE IF NOT EXISTS \"" + schema.name() + "\".\"parcels\" (\"depot\" int4 NOT NULL, \"id\" int8 NOT NULL, \"weight\" numeric(8,3),"
                + " PRIMARY KEY (\"depot\", \"id\")) DISTRIBUTED BY (\"depot\", \"id\")");
        assertThat(TestingSink.query(schema, "SELECT depot, id, weight FROM parcels")).containsExactly(List.of("7", "1", "1.250"));
    }

    private List<String> sentSince(int mark)
    {
        synchronized (sent) {
            return List.copyOf(sent.subList(mark, sent.size()));
        }
    }

    /**
     * {@code connection}, with every SQL string it is handed recorded in {@code sent} and any
     * trailing {@code DISTRIBUTED} clause removed before it reaches PostgreSQL. {@code unwrap}
     * reaches the driver's connection, so COPY goes straight to it.
     */
    static Connection withoutDistribution(Connection connection, List<String> sent)
    {
        return proxy(Connection.class, connection, (method, arguments) -> {
            if (method.getName().equals("createStatement")) {
                return proxy(Statement.class, (Statement) invoke(method, connection, arguments), (statementMethod, statementArguments) -> {
                    rewrite(statementMethod, statementArguments, sent);
                    return null;
                });
            }
            rewrite(method, arguments, sent);
            return null;
        });
    }

    private static void rewrite(Method method, Object[] arguments, List<String> sent)
    {
        String name = method.getName();
        boolean takesSql = name.startsWith("execute") || name.equals("addBatch") || name.startsWith("prepare");
        if (takesSql && arguments != null && arguments.length > 0 && arguments[0] instanceof String sql) {
            sent.add(sql);
            arguments[0] = DISTRIBUTED.matcher(sql).replaceFirst("");
        }
    }

    /** Calls {@code before} (which may change the arguments, or return a result of its own), then the target. */
    @SuppressWarnings("unchecked")
    private static <T> T proxy(Class<T> type, T target, Interception before)
    {
        InvocationHandler handler = (self, method, arguments) -> {
            Object own = before.intercept(method, arguments);
            return own != null ? own : invoke(method, target, arguments);
        };
        return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler);
    }

    private static Object invoke(Method method, Object target, Object[] arguments)
            throws Throwable
    {
        try {
            return method.invoke(target, arguments);
        }
        catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @FunctionalInterface
    private interface Interception
    {
        Object intercept(Method method, Object[] arguments)
                throws Throwable;
    }
}
