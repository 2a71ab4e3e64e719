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
 */
public record VerifyOptions(long chunkRows, int parallelism, int maxKeys, Duration catchUpTimeout, int rechecks)
{
    public VerifyOptions
    {
        if (chunkRows < 1 || parallelism < 1 || maxKeys < 1 || rechecks < 1) {
            throw new IllegalArgumentException("chunkRows, parallelism, maxKeys and rechecks must be positive");
        }
        requireNonNull(catchUpTimeout, "catchUpTimeout is null");
    }
}
