package io.pgsink.core.buffer;

import java.util.concurrent.TimeUnit;

/**
 * When a sink flushes its buffers: when this many events are buffered, when the buffered rows take
 * this many bytes (which bounds memory; a flush blocks the source, which is the backpressure), or
 * when the oldest buffered event has waited this long. Whichever comes first.
 *
 * <p>A pipelined sink keeps one batch in flight while the next one fills, so each of them flushes at
 * half of {@code buffer.max.bytes} ({@link #flushBytes()}): the two together stay within it.
 *
 * @param maxEvents {@code flush.max.events}
 * @param maxBytes {@code buffer.max.bytes}
 * @param intervalMillis {@code flush.interval.ms}
 * @param pipelined {@code flush.pipelined}: a flush hands its batch to an applier thread and returns
 */
public record FlushPolicy(long maxEvents, long maxBytes, long intervalMillis, boolean pipelined)
{
    public FlushPolicy
    {
        if (maxEvents < 1) {
            throw new IllegalArgumentException("maxEvents must be at least 1: " + maxEvents);
        }
        if (maxBytes < 1) {
            throw new IllegalArgumentException("maxBytes must be at least 1: " + maxBytes);
        }
        if (intervalMillis < 0) {
            throw new IllegalArgumentException("intervalMillis must not be negative: " + intervalMillis);
        }
    }

    /** A policy that flushes synchronously. */
    public FlushPolicy(long maxEvents, long maxBytes, long intervalMillis)
    {
        this(maxEvents, maxBytes, intervalMillis, false);
    }

    /** The same policy, pipelined or not. */
    public FlushPolicy withPipelined(boolean pipelined)
    {
        return new FlushPolicy(maxEvents, maxBytes, intervalMillis, pipelined);
    }

    /**
     * The buffered bytes at which one buffer flushes: all of {@code buffer.max.bytes}, or half of it when a second
     * batch may be in flight.
     */
    public long flushBytes()
    {
        return pipelined ? Math.max(1, maxBytes / 2) : maxBytes;
    }

    public boolean isFull(long events, long bytes)
    {
        return events >= maxEvents || bytes >= flushBytes();
    }

    public boolean isDue(long events, long firstEventNanos, long nowNanos)
    {
        return events > 0 && nowNanos - firstEventNanos >= TimeUnit.MILLISECONDS.toNanos(intervalMillis);
    }
}
