package io.pgsink.merge;

import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.TargetCatalog;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The merge suite on a real Greenplum or Cloudberry cluster, plus what only such a cluster can
 * show: the distribution policies the sink's tables really get. Subclasses give the cluster and
 * carry the condition under which it exists: {@link GreenplumMergeIT} the one at
 * {@code PGSINK_TEST_GREENPLUM_URL}, {@link AbstractGreenplumContainerMergeTest} one container per
 * class.
 */
@Tag("greenplum")
abstract class AbstractGreenplumMergeTest
        extends AbstractMergeTest
{
    /** What {@code version()} of the cluster must contain, as a regular expression. */
    protected abstract String expectedVersion();

    @Override
    protected Dialect expectedDialect()
    {
        return Dialect.GREENPLUM;
    }

    @Override
    protected void createTable(String name, String definitions, String... distributedBy)
            throws SQLException
    {
        // without columns, Greenplum distributes by the primary key
        String distribution = distributedBy.length == 0 ? "" : Dialect.GREENPLUM.distribution().distributedBy(List.of(distributedBy));
        schema.execute("CREATE TABLE " + name + " (" + definitions + ")" + distribution);
        tableCreated(name);
    }

    @Override
    protected int streamEvents()
    {
        return 50_000;
    }

    @Test
    void serverIsTheExpectedVersion()
            throws SQLException
    {
        assertThat(TestingSink.query(schema, "SELECT version()").get(0).get(0)).containsPattern(expectedVersion());
    }

    @Test
    void catalogReadsTheDistributionKeyInKeyOrder()
            throws SQLException
    {
        createTable("spread", "a int, b int, c text, PRIMARY KEY (a, b)", "b", "a");
        schema.execute("CREATE TABLE everywhere (a int PRIMARY KEY, c text) DISTRIBUTED REPLICATED");
        try (Connection connection = schema.connect()) {
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "spread"), Dialect.GREENPLUM).orElseThrow().distributionKey()).containsExactly("b", "a");
            assertThat(TargetCatalog.read(connection, TableId.of(schema.name(), "everywhere"), Dialect.GREENPLUM).orElseThrow().distributionKey()).isEmpty();
        }
    }

    @Test
    void stagingTableIsDistributedLikeItsTarget()
            throws SQLException
    {
        createTable("parcels", "depot int, id bigint, state text, PRIMARY KEY (id, depot)", "depot");
        TableSchema parcels = TableSchema.of(TableId.of("src", "parcels"), List.of("depot", "id", "state"), List.of("depot", "id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(parcels, new Object[] {1, 1L, "new"}, at(1), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(parcels, null, new Object[] {1, 1L, "sent"}, at(2), 0));
            sink.flush();
            // the staging table lives as long as the sink's session: read its policy meanwhile
            assertThat(TestingSink.query(schema, """
                    SELECT a.attname
                    FROM pg_class c
                    JOIN gp_distribution_policy p ON p.localoid = c.oid
                    CROSS JOIN generate_subscripts(p.distkey, 1) AS k(position)
                    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.distkey[k.position]
                    WHERE c.relname LIKE 'pgsink\\_stage\\_%\\_parcels' AND c.relpersistence = 't'
                    ORDER BY k.position""")).containsExactly(List.of("depot"));
        }
        assertThat(TestingSink.query(schema, "SELECT depot, id, state FROM parcels")).containsExactly(List.of("1", "1", "sent"));
    }

    @Test
    void offsetsAndCreatedTablesAreDistributedByTheirKeys()
            throws SQLException
    {
        TableSchema crates = new TableSchema(TableId.of("src", "crates"),
                List.of(new ColumnSchema("depot", "int4", false), new ColumnSchema("id", "int8", false), new ColumnSchema("weight", "numeric(8,3)", true)),
                List.of("depot", "id"));
        try (BufferedSink sink = sink(Map.of(SinkConfig.SCHEMA_EVOLUTION, "add-columns", SinkConfig.SINK_NAME, "crates"))) {
            sink.accept(ChangeEvent.insert(crates, new Object[] {7, 1L, new BigDecimal("1.250")}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT depot, id, weight FROM crates")).containsExactly(List.of("7", "1", "1.250"));
        assertThat(distributionKey(schema.name() + ".crates")).containsExactly(List.of("depot"), List.of("id"));
        assertThat(distributionKey(schema.name() + ".pgsink_offsets")).containsExactly(List.of("sink_name"), List.of("source_partition"));
    }

    /** The upsert of Greenplum 7 does not apply to append-optimized tables ({@code ON CONFLICT} refuses them): they are deleted from and inserted into. */
    @Test
    void appliesChangesToAppendOptimizedAndReplicatedTables()
            throws SQLException
    {
        boolean uniqueIndexOnAppendOptimized = Integer.parseInt(TestingSink.query(schema, "SELECT current_setting('server_version_num')").get(0).get(0)) >= 120000;
        String appendOptimized = uniqueIndexOnAppendOptimized ? "WITH (appendoptimized = true) " : "";
        schema.execute("CREATE TABLE ledger (id bigint PRIMARY KEY, amount numeric(10,2), note text) " + appendOptimized + "DISTRIBUTED BY (id)",
                "CREATE TABLE currencies (code text PRIMARY KEY, rate numeric(10,4)) DISTRIBUTED REPLICATED");
        TableSchema ledger = TableSchema.of(TableId.of("src", "ledger"), List.of("id", "amount", "note"), List.of("id"));
        TableSchema currencies = TableSchema.of(TableId.of("src", "currencies"), List.of("code", "rate"), List.of("code"));
        try (BufferedSink sink = sink(Map.of())) {
            for (long id = 1; id <= 300; id++) {
                sink.accept(ChangeEvent.insert(ledger, new Object[] {id, new BigDecimal(id + ".00"), "new"}, at(id), 0));
            }
            sink.accept(ChangeEvent.insert(currencies, new Object[] {"EUR", new BigDecimal("1.0000")}, at(301), 0));
            sink.accept(ChangeEvent.insert(currencies, new Object[] {"USD", new BigDecimal("1.1000")}, at(302), 0));
            sink.flush();
            for (long id = 1; id <= 300; id += 2) {
                sink.accept(ChangeEvent.update(ledger, null, new Object[] {id, new BigDecimal(id + ".50"), "updated"}, at(400 + id), 0));
            }
            sink.accept(ChangeEvent.delete(ledger, new Object[] {2L, null, null}, at(800), 0));
            sink.accept(ChangeEvent.update(ledger, new Object[] {4L, null, null}, new Object[] {4000L, new BigDecimal("4.00"), "moved"}, at(801), 0));
            sink.accept(ChangeEvent.update(currencies, null, new Object[] {"USD", new BigDecimal("1.0800")}, at(802), 0));
            sink.accept(ChangeEvent.delete(currencies, new Object[] {"EUR", null}, at(803), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT count(*), count(*) FILTER (WHERE note = 'updated'), sum(amount) FROM ledger"))
                // 1 to 300, odd ones 0.50 more, 2 deleted, 4 moved to 4000
                .containsExactly(List.of("299", "150", "45223.00"));
        assertThat(TestingSink.query(schema, "SELECT note FROM ledger WHERE id IN (2, 4, 4000)")).containsExactly(List.of("moved"));
        assertThat(TestingSink.query(schema, "SELECT code, rate FROM currencies")).containsExactly(List.of("USD", "1.0800"));
        if (uniqueIndexOnAppendOptimized) {
            assertThat(TestingSink.query(schema, "SELECT count(*) FROM pg_appendonly WHERE relid = 'ledger'::regclass")).containsExactly(List.of("1"));
        }
    }

    /** A randomly distributed table has no primary key on Greenplum; with tables.without.key=append-only its inserts are COPYed in. */
    @Test
    void appendsToARandomlyDistributedTable()
            throws SQLException
    {
        schema.execute("CREATE TABLE clicks (at bigint, page text) DISTRIBUTED RANDOMLY");
        TableSchema clicks = TableSchema.of(TableId.of("src", "clicks"), List.of("at", "page"), List.of());
        try (BufferedSink sink = sink(Map.of(SinkConfig.TABLES_WITHOUT_KEY, "append-only"))) {
            for (long at = 1; at <= 100; at++) {
                sink.accept(ChangeEvent.insert(clicks, new Object[] {at, "/p" + (at % 7)}, at(at), 0));
            }
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT count(*), sum(at) FROM clicks")).containsExactly(List.of("100", "5050"));
        assertThat(TestingSink.query(schema, "SELECT policytype FROM gp_distribution_policy WHERE localoid = 'clicks'::regclass")).containsExactly(List.of("p"));
    }

    private List<List<String>> distributionKey(String table)
            throws SQLException
    {
        return TestingSink.query(schema, "SELECT a.attname FROM gp_distribution_policy p CROSS JOIN generate_subscripts(p.distkey, 1) AS k(position)"
                + " JOIN pg_attribute a ON a.attrelid = p.localoid AND a.attnum = p.distkey[k.position]"
                + " WHERE p.localoid = '" + table + "'::regclass ORDER BY k.position");
    }
}
