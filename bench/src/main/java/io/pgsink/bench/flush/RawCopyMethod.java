package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Workload;

import java.sql.Connection;
import java.sql.SQLException;

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
            workload.columns.copyRows(connection, table, workload.changes.stream().map(Workload.Change::row).toList(),
                    batchSize);
        }
    }
}
