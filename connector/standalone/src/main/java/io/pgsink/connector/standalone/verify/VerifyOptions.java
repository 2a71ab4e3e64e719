package io.pgsink.connector.standalone.verify;

import java.time.Duration;

import static java.util.Objects.requireNonNull;

/**
 * How {@code pgsink verify} compares.
 *
 * @param chunkRows the source rows per key range compared at once (and the most keys held per range)
 * @param parallelism how many ranges are compared at once, each on a source and a target connection
 * @param maxKeys the most differing keys listed (and re-checked) per table; more are counted only
 * @param catchUpTimeout how long a re-check waits for the sink to apply the source's changes up
 *         to the moment it read a differing key's source row
 * @param rechecks how many times a key whose source row changed while it was re-checked is re-checked again
 * @param distributedRangeRows the source rows per key range where the target distributes its tables
 *         (Greenplum): each range's hash there is a statement dispatched to every segment, whose fixed
 *         cost outweighs the hashing of a range of {@code chunkRows} rows; a range that differs is cut
 *         into ranges of {@code chunkRows} before its keys are read, so no more keys are held
 */
public record VerifyOptions(long chunkRows, int parallelism, int maxKeys, Duration catchUpTimeout, int rechecks,
        long distributedRangeRows)
{
    /** Ranges of {@link #DISTRIBUTED_RANGE_ROWS} rows on a distributing target, unless chunk rows are given. */
    public static final long DISTRIBUTED_RANGE_ROWS = 100_000;

    public VerifyOptions
    {
        if (chunkRows < 1 || parallelism < 1 || maxKeys < 1 || rechecks < 1 || distributedRangeRows < 1) {
            throw new IllegalArgumentException("chunkRows, parallelism, maxKeys, rechecks and distributedRangeRows"
                    + " must be positive");
        }
        requireNonNull(catchUpTimeout, "catchUpTimeout is null");
    }

    /** Ranges of {@code chunkRows} rows on every target. */
    public VerifyOptions(long chunkRows, int parallelism, int maxKeys, Duration catchUpTimeout, int rechecks)
    {
        this(chunkRows, parallelism, maxKeys, catchUpTimeout, rechecks, chunkRows);
    }
}
