package io.pgsink.connector.kafka;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.buffer.Sink;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Supplier;

/**
 * What a task keeps of its flushes: the positions per partition as flushes commit them, the age of
 * the buffer (when the oldest record taken since the last flush is due), the newest source time
 * buffered, and whether a failed flush is to be applied again. With {@code flush.pipelined} a batch
 * is handed off before it commits: what belongs to the buffer (its age, its newest source time, the
 * records kept for the errant-record reporter) moves on then, the positions only once it committed.
 *
 * <p>Owned by the task's thread (a pipelined sink calls it from the thread that takes the outcome).
 */
final class TaskFlushes
        implements FlushListener
{
    private static final Logger log = LoggerFactory.getLogger(TaskFlushes.class);

    private final String name;
    private final TaskPartitions partitions;
    private final KeyChangeHold keyChanges;
    private final TaskMetrics metrics;
    @Nullable
    private final ErrantRecords errantRecords;
    /** The task's sink, which a dropped buffer replaces. */
    private final Supplier<Sink> sink;
    /** When the first record since the last flush was taken; -1 when none was. */
    private long firstTakenNanos = -1;
    /** The newest source commit time of the events buffered since the last flush; 0 when unknown. */
    private long newestSourceMillis;
    /** The newest source commit time of the batch handed off last. */
    private long handedOffSourceMillis;
    private boolean retry;

    TaskFlushes(String name, TaskPartitions partitions, KeyChangeHold keyChanges, TaskMetrics metrics,
            @Nullable ErrantRecords errantRecords, Supplier<Sink> sink)
    {
        this.name = name;
        this.partitions = partitions;
        this.keyChanges = keyChanges;
        this.metrics = metrics;
        this.errantRecords = errantRecords;
        this.sink = sink;
    }

    /** A record was taken into the buffer; {@code sourceMillis} is its event's source time, 0 when it has none. */
    void taken(long sourceMillis, long nowNanos)
    {
        if (firstTakenNanos < 0) {
            firstTakenNanos = nowNanos;
        }
        if (sourceMillis > newestSourceMillis) {
            newestSourceMillis = sourceMillis;
        }
    }

    /** Milliseconds until the oldest record taken is due to be flushed by {@code flush.interval.ms}; -1 when none. */
    long millisToDue(long intervalMillis, long nowNanos)
    {
        if (firstTakenNanos < 0) {
            return -1;
        }
        return Math.max(intervalMillis - (nowNanos - firstTakenNanos) / 1_000_000, 0);
    }

    /** Whether the last flush failed, so the next put applies it again first; asking forgets it. */
    boolean takeRetry()
    {
        boolean due = retry;
        retry = false;
        return due;
    }

    /** The buffer was dropped. */
    void reset()
    {
        retry = false;
        firstTakenNanos = -1;
        handedOffSourceMillis = 0;
    }

    @Override
    public void handedOff(Batch batch)
    {
        firstTakenNanos = -1;
        handedOffSourceMillis = newestSourceMillis;
        keyChanges.handedOff();
        newestSourceMillis = 0;
        if (errantRecords != null) {
            errantRecords.clear();
        }
    }

    @Override
    public void flushed(Batch batch, long elapsedNanos)
    {
        retry = false;
        Sink current = sink.get();
        partitions.flushed(batch.positions().values(), !current.applying() && current.bufferedEvents() == 0);
        keyChanges.committed(batch.positions());
        metrics.flushed(batch, elapsedNanos, handedOffSourceMillis);
        if (log.isDebugEnabled()) {
            log.debug("{} - flushed {} events ({} tables) in {} ms", name, batch.events(), batch.tables().size(),
                    elapsedNanos / 1_000_000);
        }
    }

    @Override
    public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
    {
        retry = true;
        metrics.flushFailed();
    }
}
