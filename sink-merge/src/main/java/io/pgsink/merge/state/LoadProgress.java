package io.pgsink.merge.state;

import io.pgsink.core.change.TableId;

import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;

import static java.util.Objects.requireNonNull;

/**
 * The initial load's progress as {@link LoadProgressStore} read it.
 *
 * @param startLsn the replication slot's consistent point when a load started; empty when none did
 * @param complete whether the load finished (the sink streams since)
 * @param tables the chunks loaded per source table
 */
public record LoadProgress(Optional<String> startLsn, boolean complete, Map<TableId, TableProgress> tables)
{
    public LoadProgress
    {
        requireNonNull(startLsn, "startLsn is null");
        tables = Map.copyOf(requireNonNull(tables, "tables is null"));
    }

    /**
     * One source table's loaded chunks.
     *
     * @param chunks how many chunks the table was split into
     * @param loadedChunks the chunks the target holds
     * @param loadLsn the LSN of the snapshot the chunks were read at (its slot's consistent point)
     * @param snapshot that snapshot's {@code pg_current_snapshot()} text ({@code xmin:xmax:xip,...})
     */
    public record TableProgress(int chunks, SortedSet<Integer> loadedChunks, long rows, long bytes, String loadLsn,
            String snapshot)
    {
        public TableProgress
        {
            loadedChunks = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(loadedChunks));
            requireNonNull(loadLsn, "loadLsn is null");
            requireNonNull(snapshot, "snapshot is null");
        }

        public boolean complete()
        {
            return loadedChunks.size() == chunks;
        }
    }
}
