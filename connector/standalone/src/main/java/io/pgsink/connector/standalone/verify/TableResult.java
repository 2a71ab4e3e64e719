package io.pgsink.connector.standalone.verify;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * What the comparison of one table found so far: rows and chunks compared, and the keys that
 * differ. At most {@code maxKeys} keys are kept (to list and re-check); beyond, keys are only
 * counted, so that a table of any size fits in memory.
 *
 * It also follows the comparison's progress, for the log of long runs.
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
    private int ranges;
    private int rangesDone;
    private long startNanos;
    private long reportedNanos;
    private long lastNanos;

    TableResult(TablePair table, int maxKeys)
    {
        this.table = requireNonNull(table, "table is null");
        this.maxKeys = maxKeys;
    }

    /** The table's comparison starts at {@code nanos}. */
    synchronized void started(long nanos)
    {
        this.startNanos = nanos;
        this.reportedNanos = nanos;
        this.lastNanos = nanos;
    }

    /** The table is cut into {@code ranges} key ranges (until then, their number is unknown). */
    synchronized void cut(int ranges)
    {
        this.ranges = ranges;
    }

    /**
     * One more of its key ranges is compared, at {@code nanos}; returns a progress line when the table
     * is done, or when the last one is at least {@code interval} nanoseconds old.
     */
    synchronized Optional<String> rangeDone(long nanos, long interval)
    {
        rangesDone++;
        lastNanos = nanos;
        boolean done = rangesDone == ranges;
        if (!done && nanos - reportedNanos < interval) {
            return Optional.empty();
        }
        reportedNanos = nanos;
        long differing = differing();
        return Optional.of(table.describe() + ": " + (done ? "compared " : "")
                + rangesDone + "/" + (ranges == 0 ? "?" : ranges) + " key ranges, " + sourceRows + " source rows, "
                + targetRows + " target rows, " + differing + " differing keys (before re-checking) in "
                + (nanos - startNanos) / 1_000_000 + " ms");
    }

    /**
     * Tells {@code listener} where the comparison stands at {@code nanos}, holding this table's lock so
     * that the listener hears of its progress in order.
     */
    synchronized void report(VerifyListener listener, long nanos)
    {
        listener.progressed(new VerifyListener.TableProgress(table.source().table(), ranges, rangesDone, sourceRows,
                differing(), (nanos - startNanos) / 1_000_000));
    }

    private long differing()
    {
        return kept.size() + unkept.values().stream().mapToLong(Long::longValue).sum();
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

    /**
     * Adds the keys of the target's misplaced rows ({@link io.pgsink.merge.verify.MisplacedRows}), found
     * after the re-check (placement is the target's alone: nothing to wait for): those of {@code keys}
     * not already kept as differing are kept as {@link Difference.Kind#MISPLACED} while there is room,
     * and the rest of the {@code count} are counted.
     */
    synchronized void misplaced(List<List<String>> keys, long count)
    {
        Set<List<String>> differing = new HashSet<>();
        kept.forEach(difference -> differing.add(difference.key()));
        for (List<String> key : keys) {
            if (!differing.add(key)) {
                // differing otherwise, or two misplaced rows of the key: listed once
                continue;
            }
            if (kept.size() < maxKeys) {
                kept.add(new Difference(Difference.Kind.MISPLACED, key));
            }
            else {
                unkept.merge(Difference.Kind.MISPLACED, 1L, Long::sum);
            }
        }
        // beyond the keys read: counted, though one may also differ in its values
        if (count > keys.size()) {
            unkept.merge(Difference.Kind.MISPLACED, count - keys.size(), Long::sum);
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
        return new TableReport(table, sourceRows, targetRows, chunks, differingChunks, kept, unkept,
                (lastNanos - startNanos) / 1_000_000);
    }
}
