package io.pgsink.bench;

import java.sql.SQLException;

/** One way of applying a workload's changes to a table, in batches. */
interface Method
{
    String name();

    /** Applies every change of {@code workload} to {@code table} (already created and loaded), {@code batchSize} events per transaction. */
    void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException;

    /** Whether the method writes into a table without a primary key (the raw COPY bound). */
    default boolean unindexedTarget()
    {
        return false;
    }
}
