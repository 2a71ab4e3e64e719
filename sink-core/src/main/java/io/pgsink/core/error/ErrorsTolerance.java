package io.pgsink.core.error;

/** {@code errors.tolerance}: what a row the target refuses does. */
public enum ErrorsTolerance
{
    /** Stop the sink, applying nothing of the batch. */
    NONE,
    /** Skip the row (to the dead-letter destination) and apply the rest. */
    ALL,
}
