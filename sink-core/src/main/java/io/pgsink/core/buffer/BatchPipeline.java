package io.pgsink.core.buffer;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

import static java.util.Objects.requireNonNull;

/**
 * The applier thread of a pipelined {@link BufferedSink} ({@code flush.pipelined}): applies one
 * handed-off batch at a time while the sink's thread buffers the next.
 *
 * <p>At most one batch is in flight: {@link #handOff} requires {@link #await} to have taken the
 * outcome of the one before. A batch that failed stays here; the next {@link #await} applies it
 * again before anything newer can be handed off, so batches commit in the order they were handed
 * off, each exactly once.
 *
 * <p>The sink's owning thread calls every method. The applier is used by the applier thread only
 * while a batch is in flight, and by nobody else in that time: the executor's hand-over orders the
 * two threads' uses of it. The listener is called on the owning thread, when {@link #await} takes
 * an outcome.
 */
final class BatchPipeline
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(BatchPipeline.class);

    private final String name;
    private final BatchApplier applier;
    private final FlushListener listener;
    private final LongSupplier nanoClock;
    private final ExecutorService thread;
    private Optional<InFlight> inFlight = Optional.empty();

    BatchPipeline(String name, BatchApplier applier, FlushListener listener, LongSupplier nanoClock)
    {
        this.name = requireNonNull(name, "name is null");
        this.applier = requireNonNull(applier, "applier is null");
        this.listener = requireNonNull(listener, "listener is null");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock is null");
        this.thread = Executors.newSingleThreadExecutor(runnable -> {
            Thread applying = new Thread(runnable, "pgsink-" + name + "-applier");
            applying.setDaemon(true);
            return applying;
        });
    }

    /** Starts applying {@code batch} and returns. */
    void handOff(Batch batch)
    {
        requireNonNull(batch, "batch is null");
        if (inFlight.isPresent()) {
            throw new IllegalStateException(name + " - a batch of " + inFlight.get().batch.events()
                    + " events is still in flight");
        }
        inFlight = Optional.of(start(batch));
    }

    /** Whether a batch was handed off whose commit {@link #await} has not seen yet, failed ones included. */
    boolean busy()
    {
        return inFlight.isPresent();
    }

    /**
     * Whether the batch in flight finished and {@link #await} has not taken its outcome yet: taking it does not block.
     */
    boolean finished()
    {
        return inFlight.isPresent() && inFlight.get().failure.isEmpty() && inFlight.get().outcome.isDone();
    }

    /**
     * Waits for the batch in flight. One that failed before is applied again first. When it
     * committed, tells the listener and returns; when it fails, tells the listener, keeps it and
     * throws its failure.
     */
    void await()
    {
        if (inFlight.isEmpty()) {
            return;
        }
        InFlight current = inFlight.get();
        if (current.failure.isPresent()) {
            log.info("{} - applying again the batch of {} events that failed: {}", name, current.batch.events(),
                    current.failure.get().getMessage());
            current = start(current.batch);
            inFlight = Optional.of(current);
        }
        long elapsed;
        try {
            elapsed = current.outcome.get();
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            // still in flight: close() waits for it, or abandons it
            throw new SinkException(ErrorCode.TRANSIENT, name + " - interrupted while a batch of "
                    + current.batch.events() + " events is being applied; it is still in flight", e);
        }
        catch (ExecutionException e) {
            RuntimeException failure = e.getCause() instanceof RuntimeException runtime ? runtime
                    : new SinkException(ErrorCode.TRANSIENT, name + " - applying a batch of " + current.batch.events()
                            + " events failed: " + e.getCause(), e.getCause());
            inFlight = Optional.of(current.failed(failure));
            listener.flushFailed(current.batch, nanoClock.getAsLong() - current.startNanos, failure);
            throw failure;
        }
        inFlight = Optional.empty();
        listener.flushed(current.batch, elapsed);
    }

    private InFlight start(Batch batch)
    {
        long start = nanoClock.getAsLong();
        Future<Long> outcome = thread.submit(() -> {
            applier.apply(batch);
            return nanoClock.getAsLong() - start;
        });
        return new InFlight(batch, start, outcome, Optional.empty());
    }

    /**
     * Lets a batch still being applied finish (its positions are stored with it, so the source
     * resumes after it if it committed, before it if not) and stops the thread. A failed batch is
     * not applied again. Interrupted, it stops waiting and interrupts the applier thread.
     */
    @Override
    public void close()
    {
        if (inFlight.isPresent() && inFlight.get().failure.isEmpty()) {
            try {
                await();
            }
            catch (SinkException e) {
                if (Thread.currentThread().isInterrupted()) {
                    log.warn("{} - closing while a batch of {} events is being applied: not waiting for it; the source "
                            + "resends it unless it committed", name, inFlight.get().batch.events());
                    thread.shutdownNow();
                    return;
                }
                // told to the listener, and to the caller of an earlier call when it was waited for
            }
        }
        if (inFlight.isPresent()) {
            log.info("{} - closing with a batch of {} events that failed to apply; the source resends it", name,
                    inFlight.get().batch.events());
        }
        thread.shutdown();
    }

    /** A handed-off batch; its failure once {@link #await} saw one. */
    private record InFlight(Batch batch, long startNanos, Future<Long> outcome, Optional<RuntimeException> failure)
    {
        InFlight failed(RuntimeException cause)
        {
            return new InFlight(batch, startNanos, outcome, Optional.of(cause));
        }
    }
}
