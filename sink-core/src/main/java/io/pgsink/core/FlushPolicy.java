package io.pgsink.core;

import java.util.concurrent.TimeUnit;

/**
 * When a sink flushes its buffers: when this many events are buffered, when the buffered rows take
 * this many bytes (which bounds memory; a flush blocks the source, which is the backpressure), or
 * when the oldest buffered event has waited this long. Whichever comes first.
 *
 * @param maxEvents {@code flush.max.events}
 * @param maxBytes {@code buffer.max.bytes}
 * @param intervalMillis {@code flush.interval.ms}
 */
public record FlushPolicy(long maxEvents, long maxBytes, long intervalMillis)
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

    public boolean isFull(long events, long bytes)
    {
        return events >= maxEvents || bytes >= maxBytes;
    }

    public boolean isDue(long events, long firstEventNanos, long nowNanos)
    {
        return events > 0 && nowNanos - firstEventNanos >= TimeUnit.MILLISECONDS.toNanos(intervalMillis);
    }
}
