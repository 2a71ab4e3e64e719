package io.pgsink.core;

/**
 * Told about every flush, for metrics and progress logging. Called on the sink's thread; must be quick.
 */
public interface FlushListener
{
    FlushListener NONE = new FlushListener() {};

    default void flushed(Batch batch, long elapsedNanos) {}

    default void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure) {}
}
