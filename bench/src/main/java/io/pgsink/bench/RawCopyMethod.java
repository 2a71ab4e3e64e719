package io.pgsink.bench;

import io.pgsink.copy.CopyLoader;
import io.pgsink.copy.CsvWriter;
import io.pgsink.core.CopyFormat;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * The upper bound for inserts: the same rows COPYed straight into a table without a primary key,
 * one COPY and commit per batch, no merging, no staging. Only meaningful for insert-only workloads.
 */
final class RawCopyMethod
        implements Method
{
    @Override
    public String name()
    {
        return "raw COPY, unindexed table";
    }

    @Override
    public boolean unindexedTarget()
    {
        return true;
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException
    {
        try (Connection connection = database.connect(false)) {
            connection.setAutoCommit(false);
            copyRows(connection, table, workload.changes.stream().map(Workload.Change::row).toList(), batchSize);
        }
    }

    /** COPYs rows into {@code table}, {@code batchSize} per transaction. */
    static void copyRows(Connection connection, String table, List<Object[]> rows, int batchSize)
            throws SQLException
    {
        String copy = CopyLoader.copyStatement(table, Workload.COLUMN_NAMES, CopyFormat.DEFAULT);
        for (int start = 0; start < rows.size(); start += batchSize) {
            List<Object[]> batch = rows.subList(start, Math.min(rows.size(), start + batchSize));
            CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
                for (Object[] row : batch) {
                    writeRow(writer, row);
                }
            });
            connection.commit();
        }
    }

    static void writeRow(CsvWriter writer, Object[] row)
            throws SQLException
    {
        writer.writeLong((Long) row[0]);
        writer.writeLong((Integer) row[1]);
        writer.writeText((String) row[2]);
        writer.writeText(((BigDecimal) row[3]).toPlainString());
        writer.writeBoolean((Boolean) row[4]);
        writer.endRow();
    }
}
