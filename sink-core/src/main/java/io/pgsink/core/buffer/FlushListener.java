package io.pgsink.core.buffer;

/**
 * Told about every flush, for metrics, progress logging and position bookkeeping. Called on the
 * sink's thread; must be quick.
 *
 * <p>A flush empties the buffers into a batch ({@link #handedOff}) and the batch commits
 * ({@link #flushed}) or fails ({@link #flushFailed}). Unpipelined, a batch is handed off only once
 * it committed, right before {@code flushed}; a failed one stays buffered. With
 * {@code flush.pipelined} it is handed off before it is applied (before the applier thread sees
 * it), and its outcome is told later, from a later call of the sink; a failed one is applied
 * again, and told again.
 */
public interface FlushListener
{
    FlushListener NONE = new FlushListener() {};

    /** The buffers were emptied into {@code batch}: what is buffered from now on belongs to the next one. */
    default void handedOff(Batch batch) {}

    default void flushed(Batch batch, long elapsedNanos) {}

    default void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure) {}
}
