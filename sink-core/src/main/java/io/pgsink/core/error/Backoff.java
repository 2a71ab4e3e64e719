package io.pgsink.core.error;

/**
 * Exponential backoff between attempts: {@code initial}, doubling, capped at {@code max}. Both
 * adapters wait this way while the target is unreachable ({@code retry.backoff.max.ms}).
 *
 * @param initialMillis the first wait
 * @param maxMillis the longest wait
 */
public record Backoff(long initialMillis, long maxMillis)
{
    /** The first wait of {@link #upTo}. */
    public static final long INITIAL_MILLIS = 500;

    public Backoff
    {
        if (initialMillis < 1 || maxMillis < 1) {
            throw new IllegalArgumentException("backoff must be positive: " + initialMillis + ", " + maxMillis);
        }
    }

    /** Attempts {@value #INITIAL_MILLIS} ms apart, doubling up to {@code maxMillis}. */
    public static Backoff upTo(long maxMillis)
    {
        return new Backoff(INITIAL_MILLIS, maxMillis);
    }

    /** The wait before attempt {@code attempt + 1}, {@code attempt} counting from 0. */
    public long delayMillis(int attempt)
    {
        long delay = Math.min(initialMillis, maxMillis);
        for (int i = 0; i < attempt && delay < maxMillis; i++) {
            delay = delay > maxMillis / 2 ? maxMillis : delay * 2;
        }
        return delay;
    }
}
