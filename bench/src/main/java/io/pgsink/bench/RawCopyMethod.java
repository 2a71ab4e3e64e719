package io.pgsink.bench;

import io.pgsink.copy.load.CopyLoader;
import io.pgsink.core.config.CopyFormat;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * The bounds for inserts: the same rows COPYed straight into the target, one COPY and commit per
 * batch, no merging, no staging, no stored position. Into a table without a primary key it is the
 * upper bound of any insert path; into the indexed target table it shows what maintaining the
 * primary-key index costs. Only meaningful for insert-only workloads.
 */
final class RawCopyMethod
        implements Method
{
    private final boolean indexed;

    RawCopyMethod(boolean indexed)
    {
        this.indexed = indexed;
    }

    @Override
    public String name()
    {
        return indexed ? "raw COPY, indexed table" : "raw COPY, unindexed table";
    }

    @Override
    public boolean unindexedTarget()
    {
        return !indexed;
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException
    {
        try (Connection connection = database.connect(false)) {
            connection.setAutoCommit(false);
            copyRows(connection, table, workload.columns, workload.changes.stream().map(Workload.Change::row).toList(), batchSize);
        }
    }

    /** COPYs rows into {@code table}, {@code batchSize} per transaction. */
    static void copyRows(Connection connection, String table, Columns columns, List<Object[]> rows, int batchSize)
            throws SQLException
    {
        String copy = CopyLoader.copyStatement(table, columns.names, CopyFormat.DEFAULT);
        for (int start = 0; start < rows.size(); start += batchSize) {
            List<Object[]> batch = rows.subList(start, Math.min(rows.size(), start + batchSize));
            CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
                for (Object[] row : batch) {
                    columns.writeRow(writer, row);
                }
            });
            connection.commit();
        }
    }
}
