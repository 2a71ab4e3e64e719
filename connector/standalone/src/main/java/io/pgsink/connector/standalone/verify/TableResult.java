package io.pgsink.connector.standalone.verify;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * What the comparison of one table found so far: rows and chunks compared, and the keys that
 * differ. At most {@code maxKeys} keys are kept (to list and re-check); beyond, keys are only
 * counted, so that a table of any size fits in memory.
 *
 * <p>Thread-safe: the workers comparing its chunks add to it concurrently.
 */
final class TableResult
{
    private final TablePair table;
    private final int maxKeys;
    private long sourceRows;
    private long targetRows;
    private long chunks;
    private long differingChunks;
    private final List<Difference> kept = new ArrayList<>();
    private final Map<Difference.Kind, Long> unkept = new EnumMap<>(Difference.Kind.class);

    TableResult(TablePair table, int maxKeys)
    {
        this.table = requireNonNull(table, "table is null");
        this.maxKeys = maxKeys;
    }

    TablePair table()
    {
        return table;
    }

    synchronized void chunk(long sourceRows, long targetRows, List<Difference> differences)
    {
        this.sourceRows += sourceRows;
        this.targetRows += targetRows;
        chunks++;
        if (!differences.isEmpty()) {
            differingChunks++;
        }
        for (Difference difference : differences) {
            if (kept.size() < maxKeys) {
                kept.add(difference);
            }
            else {
                unkept.merge(difference.kind(), 1L, Long::sum);
            }
        }
    }

    /** The keys kept, to re-check. */
    synchronized List<Difference> differences()
    {
        return List.copyOf(kept);
    }

    /** Replaces the keys kept with those that still differ after re-checking them. */
    synchronized void confirmed(List<Difference> differences)
    {
        kept.clear();
        kept.addAll(differences);
    }

    synchronized TableReport report()
    {
        return new TableReport(table, sourceRows, targetRows, chunks, differingChunks, kept, unkept);
    }
}
