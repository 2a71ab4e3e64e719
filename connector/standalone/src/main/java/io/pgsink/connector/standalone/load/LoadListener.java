package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.TableId;

/**
 * Told of each chunk an initial load commits in the target, for metrics. Called from the load's
 * worker threads; an implementation must be thread-safe, cheap and must not throw.
 */
@FunctionalInterface
public interface LoadListener
{
    LoadListener NONE = (table, rows, bytes) -> {};

    void chunkLoaded(TableId table, long rows, long bytes);
}
