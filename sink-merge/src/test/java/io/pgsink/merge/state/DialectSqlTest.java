package io.pgsink.merge.state;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.TargetDialect;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.SmallBatchSql;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.schema.SchemaEvolution;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The generated SQL per dialect; Greenplum is covered here since no Greenplum runs in CI. */
class DialectSqlTest
{
    /** {@code SELECT version()} of each Greenplum the dialect serves, as those servers print it. */
    private static final String GREENPLUM_6 = "PostgreSQL 9.4.26 (Greenplum Database 6.27.1 build commit:6f4b6dd5a5d4b8f1e1d2c0a4a3d1b7f2c9e8a7b6) on x86_64-unknown-linux-gnu,"
            + " compiled by gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, 64-bit compiled on Jan 10 2025 10:00:00";
    private static final String GREENPLUM_7 = "PostgreSQL 12.12 (Greenplum Database 7.1.0 build commit:e7c2b1a2f3d4c5b6a7980a1b2c3d4e5f6a7b8c9d) on x86_64-pc-linux-gnu,"
            + " compiled by gcc (GCC) 11.4.0, 64-bit compiled on Feb 1 2024 10:00:00";
    private static final String CLOUDBERRY_1 = "PostgreSQL 14.4 (Cloudberry Database 1.6.0 build 1) on x86_64-pc-linux-gnu, compiled by gcc (GCC) 10.2.1 20210130 (Red Hat 10.2.1-11), 64-bit";
    private static final String CLOUDBERRY_2 = "PostgreSQL 14.4 (Apache Cloudberry 2.0.0-incubating build 1) on aarch64-unknown-linux-gnu, compiled by gcc (GCC) 11.5.0 20240719 (Red Hat 11.5.0-11), 64-bit";

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
        assertThat(Dialect.forSetting(TargetDialect.POSTGRESQL, "Greenplum Database 6")).isSameAs(Dialect.POSTGRESQL);
        for (String version : List.of(GREENPLUM_6, GREENPLUM_7, CLOUDBERRY_1, CLOUDBERRY_2)) {
            assertThat(Dialect.fromVersion(version)).as(version).isSameAs(Dialect.GREENPLUM);
            assertThat(Dialect.forSetting(TargetDialect.AUTO, version)).as(version).isSameAs(Dialect.GREENPLUM);
            assertThat(Dialect.forSetting(TargetDialect.GREENPLUM, version)).as(version).isSameAs(Dialect.GREENPLUM);
        }
        // a forced Greenplum dialect on a server that does not say what it is
        assertThat(Dialect.forSetting(TargetDialect.GREENPLUM, "PostgreSQL 15.20")).isSameAs(Dialect.GREENPLUM);
    }

    @Test
    void refusesGreenplumOlderThanSix()
    {
        String greenplum5 = "PostgreSQL 8.3.23 (Greenplum Database 5.29.10 build commit:a1b2c3) on x86_64-pc-linux-gnu, compiled by GCC gcc (GCC) 6.4.0, 64-bit compiled on Nov 2 2022";
        for (TargetDialect setting : List.of(TargetDialect.AUTO, TargetDialect.GREENPLUM)) {
            assertThatThrownBy(() -> Dialect.forSetting(setting, greenplum5))
                    .isInstanceOf(SinkException.class)
                    .hasMessageStartingWith("The target is Greenplum 5 (version() says 'PostgreSQL 8.3.23 (Greenplum Database 5.29.10")
                    .hasMessageContaining("it needs Greenplum 6 or later, or Apache Cloudberry")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.CONFIG);
        }
        assertThatThrownBy(() -> Dialect.fromVersion("PostgreSQL 8.2.15 (Greenplum Database 4.3.33.7 build 1)")).hasMessageStartingWith("The target is Greenplum 4 ");
        // 6 and later, 10 and later too: the major version is compared as a number
        assertThat(Dialect.fromVersion("PostgreSQL 16.1 (Greenplum Database 10.0.0 build dev)")).isSameAs(Dialect.GREENPLUM);
    }

    /**
     * Every statement pgsink sends to a Greenplum target, for each version: one dialect serves them
     * all, so the statements must be the same, valid PostgreSQL 9.4 syntax (Greenplum 6) and free of
     * anything Greenplum lacks.
     */
    @ParameterizedTest
    @ValueSource(strings = {GREENPLUM_6, GREENPLUM_7, CLOUDBERRY_1, CLOUDBERRY_2})
    void everyGreenplumStatementForEachVersion(String version)
    {
        Dialect dialect = Dialect.fromVersion(version);
        List<String> statements = new ArrayList<>();

        String staging = dialect.staging().createStagingTable("pgsink_stage_1_order_lines", ORDERS.columns(), ORDERS);
        assertThat(staging).isEqualTo(
                "CREATE TEMPORARY TABLE \"pgsink_stage_1_order_lines\" (\"__pgsink_insert\" boolean NOT NULL, \"__pgsink_unavailable\" text, \"__pgsink_fill_0\" integer, \"__pgsink_fill_1\" bigint,"
                        + " \"tenant\" integer, \"id\" bigint, \"Note\" text) ON COMMIT DELETE ROWS DISTRIBUTED BY (\"tenant\")");
        statements.add(staging);

        String delete = dialect.delete().deleteTouchedKeys(ORDERS, "pgsink_stage_1_order_lines");
        assertThat(delete).isEqualTo("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                + "DELETE FROM \"Shop\".\"order lines\" AS t USING \"pgsink_stage_1_order_lines\" AS s WHERE t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\"");
        statements.add(delete);

        String insert = Statements.insertFromStaging(ORDERS.id(), ORDERS.columns(), "pgsink_stage_1_order_lines");
        assertThat(insert).isEqualTo(
                "INSERT INTO \"Shop\".\"order lines\" (\"tenant\", \"id\", \"Note\") SELECT \"tenant\", \"id\", \"Note\" FROM \"pgsink_stage_1_order_lines\" WHERE \"__pgsink_insert\"");
        statements.add(insert);

        // the fill never assigns a key column, so never a distribution-key column (Greenplum 6 cannot update those in a join)
        String fill = Statements.fillUnavailable(ORDERS, ORDERS.columns(), "pgsink_stage_1_order_lines");
        assertThat(fill.substring(0, fill.indexOf(" FROM "))).doesNotContain("\"tenant\" =", "\"id\" =");
        statements.add(fill);
        statements.add(Statements.unfilledRows(ORDERS, "pgsink_stage_1_order_lines"));
        statements.add(Statements.truncate(ORDERS.id()));

        String offsets = SinkTables.offsetsTable("\"meta\".\"pgsink_offsets\"", dialect);
        assertThat(offsets).isEqualTo("CREATE TABLE IF NOT EXISTS \"meta\".\"pgsink_offsets\" (sink_name text NOT NULL, source_partition text NOT NULL, source_offset text NOT NULL,"
                + " updated_at timestamp with time zone NOT NULL, PRIMARY KEY (sink_name, source_partition)) DISTRIBUTED BY (\"sink_name\", \"source_partition\")");
        statements.add(offsets);
        statements.addAll(dialect.offsets().storeOffset("\"meta\".\"pgsink_offsets\""));

        TableSchema keyed = new TableSchema(TableId.of("src", "order lines"), List.of(column("tenant", "int4"), column("id", "int8"), column("Note", "text")), List.of("tenant", "id"));
        List<String> create = SchemaEvolution.createTable(TableId.of("Shop", "order lines"), keyed, dialect, false);
        assertThat(create.get(1)).isEqualTo("CREATE TABLE IF NOT EXISTS \"Shop\".\"order lines\" (\"tenant\" int4 NOT NULL, \"id\" int8 NOT NULL, \"Note\" text,"
                + " PRIMARY KEY (\"tenant\", \"id\")) DISTRIBUTED BY (\"tenant\", \"id\")");
        statements.addAll(create);
        TableSchema keyless = new TableSchema(TableId.of("src", "log"), List.of(column("line", "text")), List.of());
        assertThat(SchemaEvolution.createTable(TableId.of("Shop", "log"), keyless, dialect, false).get(1)).endsWith(" (\"line\" text) DISTRIBUTED RANDOMLY");
        TableSchema wider = new TableSchema(keyed.table(), List.of(column("tenant", "int4"), column("id", "int8"), column("Note", "text"), column("added", "numeric(10,2)")), keyed.keyColumns());
        List<String> addColumns = SchemaEvolution.addColumns(wider, ORDERS);
        assertThat(addColumns).containsExactly("ALTER TABLE \"Shop\".\"order lines\" ADD COLUMN \"added\" numeric(10,2)");
        statements.addAll(addColumns);
        // the initial load's progress: distributed by its key; plain INSERTs and DELETEs only, and TRUNCATE of the target tables
        String loadProgress = SinkTables.initialLoadTable("\"meta\".\"pgsink_initial_load\"", dialect);
        assertThat(loadProgress).endsWith("PRIMARY KEY (sink_name, source_schema, source_table, chunk)) DISTRIBUTED BY (\"sink_name\", \"source_schema\", \"source_table\", \"chunk\")");
        statements.add(loadProgress);
        // the standalone service's reading of the source tables: the same, replaced by DELETE and INSERT
        String sourceTables = SinkTables.sourceTablesTable("\"meta\".\"pgsink_source_tables\"", dialect);
        assertThat(sourceTables).endsWith("PRIMARY KEY (sink_name, table_oid)) DISTRIBUTED BY (\"sink_name\", \"table_oid\")");
        statements.add(sourceTables);
        statements.add(SourceTableStore.delete("\"meta\".\"pgsink_source_tables\""));
        statements.add(SourceTableStore.insert("\"meta\".\"pgsink_source_tables\""));
        String deadLetters = SinkTables.deadLetterTable("\"meta\".\"pgsink_dead_letters\"", dialect);
        assertThat(deadLetters).endsWith(" DISTRIBUTED RANDOMLY");
        statements.add(deadLetters);

        for (String statement : statements) {
            String upper = statement.toUpperCase(Locale.ROOT);
            // PostgreSQL 9.5+ (Greenplum 6 is 9.4): ON CONFLICT, array_position, IF NOT EXISTS on columns and indexes
            assertThat(upper).as(statement).doesNotContain("ON CONFLICT", "ARRAY_POSITION", "COLUMN IF NOT EXISTS", "INDEX IF NOT EXISTS");
        }
    }

    @Test
    void postgresqlTablesAreNotDistributed()
    {
        assertThat(Dialect.POSTGRESQL.distribution().distributedBy(List.of("id"))).isEmpty();
        assertThat(Dialect.POSTGRESQL.distribution().distributedBy(List.of())).isEmpty();
        assertThat(Dialect.GREENPLUM.distribution().distributedBy(List.of("Id", "a \"b\""))).isEqualTo(" DISTRIBUTED BY (\"Id\", \"a \"\"b\"\"\")");
        assertThat(Dialect.GREENPLUM.distribution().distributedBy(List.of())).isEqualTo(" DISTRIBUTED RANDOMLY");
    }

    @Test
    void greenplumRefusesADistributionKeyOutsideThePrimaryKey()
    {
        TargetTable byRegion = new TargetTable(ORDERS.id(),
                List.of(new TargetColumn("tenant", "integer", "int4", true), new TargetColumn("id", "bigint", "int8", true), new TargetColumn("region", "text", "text", false)),
                List.of("tenant", "id"),
                List.of("region"));
        TableSchema source = TableSchema.of(TableId.of("src", "order lines"), List.of("tenant", "id", "region"), List.of("tenant", "id"));
        SinkConfig config = SinkConfig.parse(Map.of(SinkConfig.TARGET_URL, "jdbc:postgresql://localhost/dw"));
        assertThatThrownBy(() -> TablePlan.create(source, byRegion, Dialect.GREENPLUM, config.copyFormat(), false, "stage"))
                .isInstanceOf(SinkException.class)
                .hasMessage("Cannot apply changes of \"src\".\"order lines\" to \"Shop\".\"order lines\": the Greenplum distribution key [region] is not part of the primary key [tenant, id],"
                        + " so a key cannot be located on one segment. Distribute the table by (part of) its primary key.")
                .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
        // the same table is fine on PostgreSQL, and on Greenplum when distributed by part of the key
        assertThat(TablePlan.create(source, byRegion, Dialect.POSTGRESQL, config.copyFormat(), false, "stage").delete).startsWith("DELETE FROM");
        TargetTable byTenant = new TargetTable(byRegion.id(), byRegion.columns(), byRegion.primaryKey(), List.of("tenant"));
        assertThat(TablePlan.create(source, byTenant, Dialect.GREENPLUM, config.copyFormat(), false, "stage").createStaging).endsWith(" DISTRIBUTED BY (\"tenant\")");
    }

    private static ColumnSchema column(String name, String type)
    {
        return new ColumnSchema(name, type, true);
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
        // index probes per key on each segment, see GreenplumDialect.deleteJoined
        assertThat(Dialect.GREENPLUM.delete().deleteTouchedKeys(ORDERS, "stage")).isEqualTo("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                + "DELETE FROM \"Shop\".\"order lines\" AS t USING \"stage\" AS s WHERE t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\"");
    }

    /** Greenplum 7 and Cloudberry upsert staged rows; Greenplum 6 (no ON CONFLICT) and PostgreSQL (MERGE from 15) do not. */
    @Test
    void greenplumSevenUpsertsAndDeletesOnlyDeletedKeys()
    {
        assertThat(Dialect.GREENPLUM.features().prefersUpsert(9)).isFalse();
        assertThat(Dialect.GREENPLUM.features().prefersUpsert(12)).isTrue();
        assertThat(Dialect.GREENPLUM.features().prefersUpsert(14)).isTrue();
        assertThat(Dialect.POSTGRESQL.features().prefersUpsert(14)).isFalse();
        TargetTable updatable = new TargetTable(ORDERS.id(), ORDERS.columns(), ORDERS.primaryKey(), ORDERS.distributionKey(), true);
        SinkConfig config = SinkConfig.parse(Map.of(SinkConfig.TARGET_URL, "jdbc:postgresql://localhost/dw"));
        TableSchema source = TableSchema.of(TableId.of("src", "order lines"), List.of("tenant", "id", "Note"), List.of("tenant", "id"));
        TablePlan plan = TablePlan.create(source, updatable, Dialect.GREENPLUM, config.copyFormat(), false, "stage");
        assertThat(plan.upsertable()).isTrue();
        assertThat(plan.upsert).isEqualTo("SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; DELETE FROM \"Shop\".\"order lines\" AS t USING \"stage\" AS s WHERE t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\" AND NOT s.\"__pgsink_insert\"; "
                + "INSERT INTO \"Shop\".\"order lines\" (\"tenant\", \"id\", \"Note\") SELECT \"tenant\", \"id\", \"Note\" FROM \"stage\" WHERE \"__pgsink_insert\""
                // never assigns a key column, which holds the distribution key
                + " ON CONFLICT (\"tenant\", \"id\") DO UPDATE SET \"Note\" = EXCLUDED.\"Note\"");
        // ON CONFLICT refuses append-optimized tables; they are deleted from and inserted into
        TargetTable appendOptimized = new TargetTable(ORDERS.id(), ORDERS.columns(), ORDERS.primaryKey(), ORDERS.distributionKey(), true, true);
        assertThat(TablePlan.create(source, appendOptimized, Dialect.GREENPLUM, config.copyFormat(), false, "stage").upsertable()).isFalse();
    }

    @Test
    void greenplumNeverUsesOnConflict()
    {
        List<String> store = Dialect.GREENPLUM.offsets().storeOffset("\"meta\".\"pgsink_offsets\"");
        assertThat(store).containsExactly(
                "UPDATE \"meta\".\"pgsink_offsets\" SET source_offset = ?, updated_at = now() WHERE sink_name = ? AND source_partition = ?",
                "INSERT INTO \"meta\".\"pgsink_offsets\" (source_offset, sink_name, source_partition, updated_at) VALUES (?, ?, ?, now())");
        assertThat(SinkTables.offsetsTable("o", Dialect.GREENPLUM)).endsWith("DISTRIBUTED BY (\"sink_name\", \"source_partition\")");
        String all = String.join("\n", store) + SinkTables.offsetsTable("o", Dialect.GREENPLUM)
                + Dialect.GREENPLUM.staging().createStagingTable("s", ORDERS.columns(), ORDERS)
                + Dialect.GREENPLUM.delete().deleteTouchedKeys(ORDERS, "s")
                + Statements.insertFromStaging(ORDERS.id(), ORDERS.columns(), "s")
                + Statements.fillUnavailable(ORDERS, ORDERS.columns(), "s");
        assertThat(all.toUpperCase(java.util.Locale.ROOT)).doesNotContain("ON CONFLICT");
    }

    @Test
    void mergeRewritesWholeRowsAndProbesTheKeyIndex()
    {
        TargetTable table = new TargetTable(TableId.of("Shop", "order lines"),
                List.of(new TargetColumn("tenant", "integer", "int4", true), new TargetColumn("id", "bigint", "int8", true), new TargetColumn("Note", "text", "text", false),
                        new TargetColumn("loaded_at", "timestamp with time zone", "timestamptz", false), new TargetColumn("note_length", "integer", "int4", false, true, false)),
                List.of("tenant", "id"), List.of(), true);
        List<TargetColumn> staged = table.columns().subList(0, 3);
        assertThat(Statements.mergeFromStaging(table, staged, "stage")).isEqualTo(
                "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                        + "MERGE INTO \"Shop\".\"order lines\" AS t USING (SELECT * FROM \"stage\" ORDER BY \"tenant\", \"id\") AS s ON t.\"tenant\" = s.\"tenant\" AND t.\"id\" = s.\"id\""
                        + " WHEN MATCHED AND NOT s.\"__pgsink_insert\" THEN DELETE"
                        // a column the source lacks gets its default, as a delete and insert would give it; a generated one is computed
                        + " WHEN MATCHED THEN UPDATE SET \"Note\" = s.\"Note\", \"loaded_at\" = DEFAULT"
                        + " WHEN NOT MATCHED AND s.\"__pgsink_insert\" THEN INSERT (\"tenant\", \"id\", \"Note\") OVERRIDING SYSTEM VALUE VALUES (s.\"tenant\", s.\"id\", s.\"Note\")");

        TargetTable keyOnly = new TargetTable(TableId.of("s", "k"), List.of(new TargetColumn("id", "bigint", "int8", true)), List.of("id"), List.of(), true);
        assertThat(Statements.mergeFromStaging(keyOnly, keyOnly.columns(), "stage"))
                .contains(" WHEN MATCHED THEN DO NOTHING WHEN NOT MATCHED AND s.\"__pgsink_insert\" THEN INSERT (\"id\") OVERRIDING SYSTEM VALUE VALUES (s.\"id\")");
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
    void greenplumToastFillJoinsOnTheKeyAndLeavesTheDistributionKeyAlone()
    {
        // Greenplum runs the same UPDATE ... FROM on a staging table distributed like the target
        String staging = Dialect.GREENPLUM.staging().createStagingTable("stage", ORDERS.columns(), ORDERS);
        assertThat(staging)
                .contains("\"__pgsink_unavailable\" text, \"__pgsink_fill_0\" integer, \"__pgsink_fill_1\" bigint,")
                .endsWith(" DISTRIBUTED BY (\"tenant\")");
        String fill = Statements.fillUnavailable(ORDERS, ORDERS.columns(), "stage");
        assertThat(fill).isEqualTo(
                "UPDATE \"stage\" AS s SET \"Note\" = CASE WHEN substr(s.\"__pgsink_unavailable\", 3, 1) = '1' THEN t.\"Note\" ELSE s.\"Note\" END, \"__pgsink_unavailable\" = NULL"
                        + " FROM \"Shop\".\"order lines\" AS t WHERE s.\"__pgsink_unavailable\" IS NOT NULL"
                        + " AND t.\"tenant\" = COALESCE(s.\"__pgsink_fill_0\", s.\"tenant\") AND t.\"id\" = COALESCE(s.\"__pgsink_fill_1\", s.\"id\")");
        // Greenplum 5 cannot assign a distribution-key column in an UPDATE, 6 and later do it as a
        // split update (delete + insert across segments): the fill never assigns one
        String assignments = fill.substring(fill.indexOf(" SET ") + " SET ".length(), fill.indexOf(" FROM "));
        for (String column : ORDERS.distributionKey()) {
            assertThat(assignments).doesNotContain("\"" + column + "\" =");
        }

        // a table spread randomly, and one with a key of one column, fill the same way
        TargetTable random = new TargetTable(TableId.of("s", "blobs"),
                List.of(new TargetColumn("id", "bigint", "int8", true), new TargetColumn("body", "bytea", "bytea", false), new TargetColumn("doc", "jsonb", "jsonb", false)),
                List.of("id"), List.of());
        assertThat(Dialect.GREENPLUM.staging().createStagingTable("stage", random.columns(), random)).endsWith(" DISTRIBUTED RANDOMLY");
        assertThat(Statements.fillUnavailable(random, random.columns(), "stage")).isEqualTo(
                "UPDATE \"stage\" AS s SET \"body\" = CASE WHEN substr(s.\"__pgsink_unavailable\", 2, 1) = '1' THEN t.\"body\" ELSE s.\"body\" END,"
                        + " \"doc\" = CASE WHEN substr(s.\"__pgsink_unavailable\", 3, 1) = '1' THEN t.\"doc\" ELSE s.\"doc\" END, \"__pgsink_unavailable\" = NULL"
                        + " FROM \"s\".\"blobs\" AS t WHERE s.\"__pgsink_unavailable\" IS NOT NULL AND t.\"id\" = COALESCE(s.\"__pgsink_fill_0\", s.\"id\")");
    }

    @Test
    void toastFillTakesMaskedColumnsFromTheTargetRow()
    {
        assertThat(Statements.fillUnavailable(ORDERS, ORDERS.columns(), "stage")).isEqualTo(
                "UPDATE \"stage\" AS s SET \"Note\" = CASE WHEN substr(s.\"__pgsink_unavailable\", 3, 1) = '1' THEN t.\"Note\" ELSE s.\"Note\" END, \"__pgsink_unavailable\" = NULL"
                        + " FROM \"Shop\".\"order lines\" AS t WHERE s.\"__pgsink_unavailable\" IS NOT NULL"
                        + " AND t.\"tenant\" = COALESCE(s.\"__pgsink_fill_0\", s.\"tenant\") AND t.\"id\" = COALESCE(s.\"__pgsink_fill_1\", s.\"id\")");
    }

    /** Small batches cast text to the type without its modifier, so that the assignment to the column checks lengths as COPY does. */
    @Test
    void smallBatchesCastToTypesWithoutModifiers()
    {
        assertThat(SmallBatchSql.castType("character varying(20)")).isEqualTo("character varying");
        assertThat(SmallBatchSql.castType("numeric(12,2)")).isEqualTo("numeric");
        assertThat(SmallBatchSql.castType("timestamp(3) with time zone")).isEqualTo("timestamp with time zone");
        assertThat(SmallBatchSql.castType("character(5)")).isEqualTo("bpchar");
        assertThat(SmallBatchSql.castType("bit(3)[]")).isEqualTo("bit varying[]");
        assertThat(SmallBatchSql.castType("character varying(10)[][]")).isEqualTo("character varying[][]");
        assertThat(SmallBatchSql.castType("\"Shop\".\"Mood\"")).isEqualTo("\"Shop\".\"Mood\"");
        assertThat(SmallBatchSql.castType("integer")).isEqualTo("integer");
    }

    /** Built-in scalar types other than text are bound as array literals of their own type; the rest as text arrays, cast element by element. */
    @Test
    void smallBatchesBindBuiltInScalarTypesAsTheirOwnArrays()
    {
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "bigint", "int8", true))).isTrue();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "numeric(12,2)", "numeric", false))).isTrue();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "timestamp(3) with time zone", "timestamptz", false))).isTrue();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "text", "text", false))).isFalse();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "character varying(20)", "varchar", false))).isFalse();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "integer[]", "_int4", false))).isFalse();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "box", "box", false))).isFalse();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "interval year to month", "interval", false))).isFalse();
        assertThat(SmallBatchSql.bindsTyped(new TargetColumn("a", "\"Shop\".\"Mood\"", "Mood", false))).isFalse();
    }

    @Test
    void smallBatchStatementsReadUnnestedArrays()
    {
        SmallBatchSql sql = SmallBatchSql.create(Dialect.POSTGRESQL, ORDERS, ORDERS.columns(), "DELETE");
        assertThat(sql.merge()).startsWith("WITH \"__pgsink_rows\" AS (SELECT u.c0 AS \"__pgsink_insert\","
                + " u.c1 AS \"tenant\", u.c2 AS \"id\", u.c3::text AS \"Note\" FROM unnest(?::boolean[], ?::integer[], ?::bigint[], ?::text[]) AS u(c0, c1, c2, c3))"
                + " MERGE INTO \"Shop\".\"order lines\" AS t USING (SELECT * FROM \"__pgsink_rows\" ORDER BY \"tenant\", \"id\") AS s");
        assertThat(sql.deleteKeys()).startsWith("WITH \"__pgsink_keys\" AS (SELECT u.c0 AS \"tenant\", u.c1 AS \"id\" FROM unnest(?::integer[], ?::bigint[]) AS u(c0, c1))"
                + " DELETE FROM \"Shop\".\"order lines\" AS t USING (SELECT array_agg(\"tenant\") AS k0, array_agg(\"id\") AS k1 FROM \"__pgsink_keys\") AS a");
        assertThat(sql.insertRows()).endsWith(" INSERT INTO \"Shop\".\"order lines\" (\"tenant\", \"id\", \"Note\") SELECT \"tenant\", \"id\", \"Note\" FROM \"__pgsink_rows\" WHERE \"__pgsink_insert\"");
    }
}
