package io.pgsink.merge.schema;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.TargetTable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The delete of touched keys must probe the primary-key index, not read the whole target: a plan
 * that scans a 600k-row table per 10k-row batch makes every flush cost as much as the table is big.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeletePlanIT
{
    private static final int TARGET_ROWS = 600_000;
    private static final int BATCH_ROWS = 10_000;

    private TestingSchema schema;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("plan");
        schema.execute(
                "CREATE TABLE single (id bigint PRIMARY KEY, v text)",
                "INSERT INTO single SELECT g, 'value ' || g FROM generate_series(1, " + TARGET_ROWS + ") g",
                "CREATE TABLE composite (tenant int, id bigint, v text, PRIMARY KEY (tenant, id))",
                "INSERT INTO composite SELECT g % 50, g, 'value ' || g FROM generate_series(1, " + TARGET_ROWS + ") g",
                "ANALYZE single",
                "ANALYZE composite");
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        if (schema != null) {
            schema.close();
        }
    }

    @Test
    void singleColumnKeyDeleteUsesTheIndex()
            throws SQLException
    {
        List<String> plan = planOfDelete("single", "SELECT false, NULL, NULL, g * 37, 'x' FROM generate_series(1, " + BATCH_ROWS + ") g");
        assertIndexDriven(plan, "single");
    }

    @Test
    void compositeKeyDeleteUsesTheIndex()
            throws SQLException
    {
        List<String> plan = planOfDelete("composite", "SELECT false, NULL, NULL, NULL, (g * 37) % 50, g * 37, 'x' FROM generate_series(1, " + BATCH_ROWS + ") g");
        assertIndexDriven(plan, "composite");
    }

    @Test
    void deletesStayIndexDrivenForLargeAnalyzedBatches()
            throws SQLException
    {
        // a reused staging table can be large and, after a manual ANALYZE, have statistics that
        // make a hash or merge join look cheap; the statements must not depend on the estimate
        assertIndexDriven(planOfDelete("single", "SELECT false, NULL, NULL, g * 5, 'x' FROM generate_series(1, 100000) g", true), "single");
        assertIndexDriven(planOfDelete("composite", "SELECT false, NULL, NULL, NULL, (g * 5) % 50, g * 5, 'x' FROM generate_series(1, 100000) g", true), "composite");
    }

    private List<String> planOfDelete(String table, String stagedRows)
            throws SQLException
    {
        return planOfDelete(table, stagedRows, false);
    }

    private List<String> planOfDelete(String table, String stagedRows, boolean analyze)
            throws SQLException
    {
        try (Connection connection = schema.connect()) {
            connection.setAutoCommit(false);
            TargetTable target = TargetCatalog.require(connection, TableId.of(schema.name(), table), Dialect.POSTGRESQL);
            String staging = "pgsink_stage_plan_" + table;
            try (Statement statement = connection.createStatement()) {
                statement.execute(Dialect.POSTGRESQL.staging().createStagingTable(staging, target.columns(), target));
                statement.execute("INSERT INTO \"" + staging + "\" " + stagedRows);
                if (analyze) {
                    statement.execute("ANALYZE \"" + staging + "\"");
                }
                String delete = Dialect.POSTGRESQL.delete().deleteTouchedKeys(target, staging);
                List<String> plan = new ArrayList<>();
                try (ResultSet rows = statement.executeQuery("EXPLAIN " + delete)) {
                    while (rows.next()) {
                        plan.add(rows.getString(1));
                    }
                }
                return plan;
            }
            finally {
                connection.rollback();
            }
        }
    }

    private static void assertIndexDriven(List<String> plan, String table)
    {
        String text = String.join("\n", plan);
        assertThat(text).as("plan:\n%s", text).doesNotContain("Seq Scan on " + table);
        assertThat(text).as("plan:\n%s", text).doesNotContain("Merge Join").doesNotContain("Hash Join");
        assertThat(text).as("plan:\n%s", text).containsPattern("Index (Only )?Scan using " + table + "_pkey on " + table + "|Bitmap Index Scan on " + table + "_pkey");
    }
}
