package io.pgsink.connector.standalone;

/**
 * Exponential backoff between attempts: {@code initial}, doubling, capped at {@code max}.
 *
 * @param initialMillis the first wait
 * @param maxMillis the longest wait ({@code retry.backoff.max.ms})
 */
record Backoff(long initialMillis, long maxMillis)
{
    Backoff
    {
        if (initialMillis < 1 || maxMillis < 1) {
            throw new IllegalArgumentException("backoff must be positive: " + initialMillis + ", " + maxMillis);
        }
    }

    /** The wait before attempt {@code attempt + 1}, {@code attempt} counting from 0. */
    long delayMillis(int attempt)
    {
        long delay = initialMillis << Math.min(attempt, 30);
        return Math.min(delay, maxMillis);
    }
}
