package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Workload;

import java.sql.SQLException;

/** One way of applying a workload's changes to a table, in batches. */
interface Method
{
    String name();

    /**
     * Applies every change of {@code workload} to {@code table} (already created and loaded), {@code batchSize} events
     * per transaction.
     */
    void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException;

    /** Starts what the method keeps running between batches (a Kafka Connect task), before the clock starts. */
    default void setUp(BenchmarkDatabase database, String table, int batchSize) {}

    /** Stops what {@link #setUp} started, after the clock stopped. */
    default void tearDown() {}

    /**
     * Builds what the method's input needs before the clock starts (the Kafka Connect records, for the methods fed
     * them).
     */
    default void prepare(Workload workload) {}

    /** Whether the method writes into a table without a primary key (the raw COPY bound). */
    default boolean unindexedTarget()
    {
        return false;
    }
}
