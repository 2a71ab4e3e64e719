package io.pgsink.merge;

import io.pgsink.core.TableId;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The generated SQL per dialect; Greenplum is covered here since no Greenplum runs in CI. */
class DialectSqlTest
{
    private static final TargetTable ORDERS = new TargetTable(TableId.of("Shop", "order lines"),
            List.of(new TargetColumn("tenant", "integer", "int4", true), new TargetColumn("id", "bigint", "int8", true), new TargetColumn("Note", "text", "text", false)),
            List.of("tenant", "id"),
            List.of("tenant"));

    @Test
    void detectsGreenplumAndCloudberryFromVersion()
    {
        assertThat(Dialect.fromVersion("PostgreSQL 15.20 (Debian 15.20-0+deb12u1) on x86_64-pc-linux-gnu")).isSameAs(Dialect.POSTGRESQL);
        assertThat(Dialect.fromVersion("PostgreSQL 9.4.26 (Greenplum Database 6.26.0 build commit:abc) on x86_64-unknown-linux-gnu")).isSameAs(Dialect.GREENPLUM);
        assertThat(Dialect.fromVersion("PostgreSQL 12.12 (Greenplum Database 7.1.0 build commit:def) on x86_64-pc-linux-gnu")).isSameAs(Dialect.GREENPLUM);
        assertThat(Dialect.fromVersion("PostgreSQL 14.4 (Apache Cloudberry 2.0.0-incubating build 1) on x86_64-pc-linux-gnu")).isSameAs(Dialect.GREENPLUM);
        assertThat(Dialect.forSetting("postgresql", "Greenplum Database 6")).isSameAs(Dialect.POSTGRESQL);
    }

    @Test
    void greenplumStagingIsDistributedLikeTheTarget()
    {
        assertThat(Dialect.GREENPLUM.staging().createStagingTable("pgsink_stage_1_order", ORDERS.columns(), ORDERS)).isEqualTo(
                "CREATE TEMPORARY TABLE \"pgsink_stage_1_order\" (\"__pgsink_insert\" boolean NOT NULL, \"__pgsink_unavailable\" text, \"__pgsink_fill_0\" integer, \"__pgsink_fill_1\" bigint,"
                        + " \"tenant\" integer, \"id\" bigint, \"Note\" text)"
                        + " ON COMMIT DELETE ROWS DISTRIBUTED BY (\"tenant\")");
        TargetTable random = new TargetTable(ORDERS.id(), ORDERS.columns(), ORDERS.primaryKey(), List.of());
        assertThat(Dialect.GREENPLUM.staging().createStagingTable("s", random.columns(), random)).endsWith(" ON COMMIT DELETE ROWS DISTRIBUTED RANDOMLY");
    }

    @Test
    void greenplumDeletesWithAColocatedJoin()
    {
        assertThat(Dialect.GREENPLUM.delete().deleteTouchedKeys(ORDERS, "stage")).isEqualTo(
                "DELETE FROM \"Shop\".\"order lines\" AS t USING \"stage\" AS s WHERE t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\"");
    }

    @Test
    void greenplumNeverUsesOnConflict()
    {
        List<String> store = Dialect.GREENPLUM.offsets().storeOffset("\"meta\".\"pgsink_offsets\"");
        assertThat(store).containsExactly(
                "UPDATE \"meta\".\"pgsink_offsets\" SET source_offset = ?, updated_at = now() WHERE sink_name = ? AND source_partition = ?",
                "INSERT INTO \"meta\".\"pgsink_offsets\" (source_offset, sink_name, source_partition, updated_at) VALUES (?, ?, ?, now())");
        assertThat(Dialect.GREENPLUM.offsets().createOffsetsTable("o")).endsWith("DISTRIBUTED BY (sink_name, source_partition)");
        String all = String.join("\n", store) + Dialect.GREENPLUM.offsets().createOffsetsTable("o")
                + Dialect.GREENPLUM.staging().createStagingTable("s", ORDERS.columns(), ORDERS)
                + Dialect.GREENPLUM.delete().deleteTouchedKeys(ORDERS, "s")
                + Statements.insertFromStaging(ORDERS.id(), ORDERS.columns(), "s")
                + Statements.fillUnavailable(ORDERS, ORDERS.columns(), "s");
        assertThat(all.toUpperCase(java.util.Locale.ROOT)).doesNotContain("ON CONFLICT");
    }

    @Test
    void postgresqlDeletesAreIndexDriven()
    {
        TargetTable single = new TargetTable(TableId.of("s", "t"), List.of(new TargetColumn("id", "bigint", "int8", true)), List.of("id"), List.of());
        assertThat(Dialect.POSTGRESQL.delete().deleteTouchedKeys(single, "stage")).isEqualTo(
                "DELETE FROM \"s\".\"t\" WHERE \"id\" = ANY(ARRAY(SELECT \"id\" FROM \"stage\"))");
        assertThat(Dialect.POSTGRESQL.delete().deleteTouchedKeys(ORDERS, "stage")).isEqualTo(
                "DELETE FROM \"Shop\".\"order lines\" AS t USING (SELECT array_agg(\"tenant\") AS k0, array_agg(\"id\") AS k1 FROM \"stage\") AS a,"
                        + " unnest(a.k0, a.k1) AS u(k0, k1) WHERE t.\"tenant\" = u.k0 AND t.\"id\" = u.k1");
        assertThat(Dialect.POSTGRESQL.offsets().storeOffset("o").get(0)).contains("ON CONFLICT (sink_name, source_partition) DO UPDATE");
    }

    @Test
    void toastFillTakesMaskedColumnsFromTheTargetRow()
    {
        assertThat(Statements.fillUnavailable(ORDERS, ORDERS.columns(), "stage")).isEqualTo(
                "UPDATE \"stage\" AS s SET \"Note\" = CASE WHEN substr(s.\"__pgsink_unavailable\", 3, 1) = '1' THEN t.\"Note\" ELSE s.\"Note\" END, \"__pgsink_unavailable\" = NULL"
                        + " FROM \"Shop\".\"order lines\" AS t WHERE s.\"__pgsink_unavailable\" IS NOT NULL"
                        + " AND t.\"tenant\" = COALESCE(s.\"__pgsink_fill_0\", s.\"tenant\") AND t.\"id\" = COALESCE(s.\"__pgsink_fill_1\", s.\"id\")");
    }
}
