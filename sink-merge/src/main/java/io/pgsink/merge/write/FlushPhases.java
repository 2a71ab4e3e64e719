package io.pgsink.merge.write;

import java.util.Locale;

/**
 * Where one flush attempt spent its time, by phase, for the DEBUG line {@code MergeApplier} logs
 * per flush: on a Greenplum cluster every statement is dispatched to the segments and every
 * commit that wrote on more than one segment is a two-phase commit, so the same batch costs
 * differently per phase than on PostgreSQL, and this line shows which phase to work on.
 *
 * <p>Not thread-safe: one per flush attempt, on the sink's thread.
 */
public final class FlushPhases
{
    /** The steps of a flush, in the order they usually run. */
    public enum Phase
    {
        /** Creating staging tables (once per connection and table version) and planning new schema versions. */
        PREPARE("prepare"),
        TRUNCATE("truncate"),
        /** COPY into staging tables. */
        COPY_STAGING("copy staging"),
        /** Filling unchanged TOAST values from the target. */
        FILL("fill"),
        /** Deleting touched keys, or the one statement that applies staged changes (MERGE, INSERT ... ON CONFLICT). */
        APPLY("apply"),
        /** COPY of final rows straight into targets. */
        COPY_TARGET("copy target"),
        /** INSERT of staged final rows. */
        INSERT("insert"),
        POSITIONS("positions"),
        REJECTED("rejected rows"),
        COMMIT("commit");

        private final String label;

        Phase(String label)
        {
            this.label = label;
        }
    }

    private final long[] nanos = new long[Phase.values().length];

    /**
     * Adds the time since {@code startNanos} (a {@link System#nanoTime()}) to {@code phase}, and returns now, the start
     * of the next phase.
     */
    public long add(Phase phase, long startNanos)
    {
        long now = System.nanoTime();
        nanos[phase.ordinal()] += now - startNanos;
        return now;
    }

    /** The phases that took time, e.g. {@code copy staging 3.1 ms, apply 12.0 ms, commit 4.2 ms}. */
    @Override
    public String toString()
    {
        StringBuilder text = new StringBuilder();
        for (Phase phase : Phase.values()) {
            long spent = nanos[phase.ordinal()];
            if (spent > 0) {
                text.append(text.length() == 0 ? "" : ", ").append(phase.label).append(' ')
                        .append(String.format(Locale.ROOT, "%.1f", spent / 1e6)).append(" ms");
            }
        }
        return text.toString();
    }
}
