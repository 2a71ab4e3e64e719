package io.pgsink.connector.standalone.verify;

import io.pgsink.core.change.TableId;

import static java.util.Objects.requireNonNull;

/**
 * Follows a verify's progress, table by table: called when a table's comparison starts and after
 * each of its key ranges is compared, from the verify's worker threads, concurrently for different
 * tables; so an implementation is thread-safe, and quick (a worker waits for it).
 */
@FunctionalInterface
public interface VerifyListener
{
    VerifyListener NONE = progress -> {};

    void progressed(TableProgress progress);

    /**
     * Where one table's comparison stands.
     *
     * @param table the source table
     * @param rangesTotal its key ranges, 0 until the source's keys are all cut into ranges
     * @param rangesDone its key ranges compared
     * @param rowsCompared source rows in the ranges compared
     * @param differingKeys keys found differing so far, before they are re-checked
     * @param elapsedMillis since the table's comparison started
     */
    record TableProgress(TableId table, long rangesTotal, long rangesDone, long rowsCompared, long differingKeys,
            long elapsedMillis)
    {
        public TableProgress
        {
            requireNonNull(table, "table is null");
        }
    }
}
