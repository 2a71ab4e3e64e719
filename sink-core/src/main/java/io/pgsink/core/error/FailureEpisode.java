package io.pgsink.core.error;

import static java.util.Objects.requireNonNull;

/**
 * The failures in a row of something retried: each waits longer than the one before, by
 * {@link Backoff}, until a success ends the episode and the next failure waits the shortest time
 * again. Not thread-safe.
 */
public final class FailureEpisode
{
    private final Backoff backoff;
    private int failures;

    public FailureEpisode(Backoff backoff)
    {
        this.backoff = requireNonNull(backoff, "backoff is null");
    }

    /** Counts a failure; returns how long to wait before the next attempt. */
    public long failed()
    {
        return backoff.delayMillis(failures++);
    }

    /** The failures since the last success, counting the one just reported. */
    public int failures()
    {
        return failures;
    }

    /** Ends the episode. */
    public void succeeded()
    {
        failures = 0;
    }
}
