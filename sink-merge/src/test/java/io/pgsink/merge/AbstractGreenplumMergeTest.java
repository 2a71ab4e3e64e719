package io.pgsink.merge;

import io.pgsink.core.BufferedSink;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.ColumnSchema;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.TableId;
import io.pgsink.core.TableSchema;
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

    private List<List<String>> distributionKey(String table)
            throws SQLException
    {
        return TestingSink.query(schema, "SELECT a.attname FROM gp_distribution_policy p CROSS JOIN generate_subscripts(p.distkey, 1) AS k(position)"
                + " JOIN pg_attribute a ON a.attrelid = p.localoid AND a.attnum = p.distkey[k.position]"
                + " WHERE p.localoid = '" + table + "'::regclass ORDER BY k.position");
    }
}
