package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code flush.pipelined}: a flush hands its batch off and returns; batches commit one at a time in
 * the order they were handed off; a failed one surfaces at the next flush, which applies it again
 * before anything newer; positions follow committed batches only. Threads meet at semaphores and
 * queues, never at sleeps.
 */
class PipelinedBufferedSinkTest
{
    private static final TableId ORDERS = TableId.of("shop", "orders");
    private static final TableSchema ORDERS_SCHEMA = TableSchema.of(ORDERS, List.of("id", "status"), List.of("id"));
    /** Long enough never to be reached by a passing test; only a broken one waits for it. */
    private static final long STUCK_SECONDS = 60;

    private final AtomicLong clock = new AtomicLong();
    private final GatedApplier applier = new GatedApplier();
    private final Outcomes outcomes = new Outcomes();

    private BufferedSink sink(long maxEvents)
    {
        return new BufferedSink("test", new FlushPolicy(maxEvents, Long.MAX_VALUE, 1000, true), applier, outcomes, clock::get);
    }

    private static SourcePosition at(long offset)
    {
        return new SourcePosition("db", String.valueOf(offset));
    }

    private static ChangeEvent insert(long id)
    {
        return ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {id, "new"}, at(id), 0);
    }

    @Test
    void flushReturnsWhileItsBatchAppliesAndPositionsMoveOnlyOnceItCommitted()
            throws Exception
    {
        try (BufferedSink sink = sink(100)) {
            sink.accept(insert(1));
            sink.accept(insert(2));
            sink.flush();
            Batch first = applier.started();
            assertThat(first.positions()).containsExactly(Map.entry("db", at(2)));
            // the next batch fills while the first one applies
            sink.accept(insert(3));
            assertThat(sink.bufferedEvents()).isEqualTo(1);
            assertThat(sink.committedPositions()).isEmpty();
            assertThat(outcomes.flushed).isEmpty();

            applier.proceed(1);
            sink.awaitApplied();
            assertThat(sink.committedPositions()).containsExactly(Map.entry("db", at(2)));
            assertThat(outcomes.flushed).containsExactly(first);
            assertThat(applier.target.positions).containsExactly(Map.entry("db", at(2)));
            assertThat(sink.bufferedEvents()).isEqualTo(1);
        }
    }

    @Test
    void theNextFlushWaitsForTheBatchInFlightSoBatchesCommitInOrderOneAtATime()
            throws Exception
    {
        try (BufferedSink sink = sink(2)) {
            sink.accept(insert(1));
            // full: hands off the first batch
            sink.accept(insert(2));
            Batch first = applier.started();
            sink.accept(insert(3));
            CompletableFuture<Void> secondFlush = CompletableFuture.runAsync(() -> sink.accept(insert(4)));
            // the second batch is not handed off before the first committed
            applier.proceed(1);
            secondFlush.get(STUCK_SECONDS, TimeUnit.SECONDS);
            Batch second = applier.started();
            applier.proceed(1);
            sink.awaitApplied();
            assertThat(applier.target.batches).containsExactly(first, second);
            assertThat(applier.mostAtOnce.get()).isEqualTo(1);
            assertThat(sink.committedPositions()).containsExactly(Map.entry("db", at(4)));
            assertThat(applier.target.table(ORDERS)).hasSize(4);
        }
    }

    @Test
    void aFailedBatchSurfacesAtTheNextFlushAndIsAppliedAgainBeforeAnythingNewer()
            throws Exception
    {
        SinkException lost = new SinkException(ErrorCode.TRANSIENT, "connection lost");
        try (BufferedSink sink = sink(100)) {
            sink.accept(insert(1));
            applier.target.failNext = lost;
            sink.flush();
            Batch failing = applier.started();
            sink.accept(insert(2));
            applier.proceed(1);
            assertThatThrownBy(sink::flush).isSameAs(lost);
            assertThat(outcomes.failed).containsExactly(failing);
            assertThat(sink.committedPositions()).isEmpty();
            // the event that came after stays buffered, not handed off
            assertThat(sink.bufferedEvents()).isEqualTo(1);

            applier.proceed(2);
            sink.flush();
            assertThat(applier.started()).isSameAs(failing);
            Batch newer = applier.started();
            sink.awaitApplied();
            assertThat(applier.target.batches).containsExactly(failing, newer);
            assertThat(newer.positions()).containsExactly(Map.entry("db", at(2)));
            assertThat(sink.committedPositions()).containsExactly(Map.entry("db", at(2)));
            assertThat(outcomes.flushed).containsExactly(failing, newer);
        }
    }

    @Test
    void aFailedBatchSurfacesAtAwaitAppliedAndAtADueFlushIfDue()
            throws Exception
    {
        SinkException refused = new SinkException(ErrorCode.DATA, "value too long for orders (1) status");
        try (BufferedSink sink = sink(100)) {
            sink.accept(insert(1));
            applier.target.failNext = refused;
            sink.flush();
            applier.proceed(1);
            assertThatThrownBy(sink::awaitApplied).isSameAs(refused);
            sink.accept(insert(2));
            clock.set(TimeUnit.SECONDS.toNanos(2));
            applier.target.failNext = refused;
            applier.proceed(1);
            // due: applies the failed batch again first, which fails again
            assertThatThrownBy(sink::flushIfDue).isSameAs(refused);
            assertThat(applier.target.batches).isEmpty();
            assertThat(sink.bufferedEvents()).isEqualTo(1);
            assertThat(outcomes.failed).hasSize(2);
        }
    }

    @Test
    void closeLetsTheBatchInFlightFinishBeforeClosingTheApplier()
            throws Exception
    {
        BufferedSink sink = sink(100);
        sink.accept(insert(1));
        sink.flush();
        applier.started();
        CompletableFuture<Void> closing = CompletableFuture.runAsync(sink::close);
        applier.proceed(1);
        closing.get(STUCK_SECONDS, TimeUnit.SECONDS);
        assertThat(applier.calls).containsExactly("apply 1 events", "applied", "close");
        assertThat(outcomes.flushed).hasSize(1);
        assertThat(applier.target.positions).containsExactly(Map.entry("db", at(1)));
    }

    @Test
    void aPipelinedBufferFlushesAtHalfOfTheByteLimit()
    {
        FlushPolicy pipelined = new FlushPolicy(1_000_000, 1000, 0, true);
        assertThat(pipelined.flushBytes()).isEqualTo(500);
        assertThat(pipelined.isFull(1, 499)).isFalse();
        assertThat(pipelined.isFull(1, 500)).isTrue();
        assertThat(pipelined.withPipelined(false).isFull(1, 500)).isFalse();
    }

    @Test
    void aSourceTransactionMustFitInHalfOfTheByteLimitWhenPipelined()
    {
        try (BufferedSink sink = new BufferedSink("test", new FlushPolicy(1_000_000, 400, 1000, true), applier, outcomes, clock::get)) {
            sink.beginTransaction("tx-7");
            assertThatThrownBy(() -> {
                for (long id = 1; id < 1000; id++) {
                    sink.accept(insert(id));
                }
            })
                    .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                    .hasMessageContaining("source transaction tx-7 takes more than buffer.max.bytes/2 (200 of 400 bytes: flush.pipelined=true keeps a second batch in flight) after ");
            assertThat(applier.target.batches).isEmpty();
        }
    }

    /** The in-memory target behind a gate: each apply announces its batch, then waits for a permit. */
    private static final class GatedApplier
            implements BatchApplier
    {
        final InMemoryTarget target = new InMemoryTarget();
        final List<String> calls = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger mostAtOnce = new AtomicInteger();
        private final AtomicInteger applying = new AtomicInteger();
        private final BlockingQueue<Batch> started = new LinkedBlockingQueue<>();
        private final Semaphore permits = new Semaphore(0);

        @Override
        public void apply(Batch batch)
        {
            mostAtOnce.accumulateAndGet(applying.incrementAndGet(), Math::max);
            try {
                calls.add("apply " + batch.events() + " events");
                started.add(batch);
                permits.acquireUninterruptibly();
                target.apply(batch);
                calls.add("applied");
            }
            finally {
                applying.decrementAndGet();
            }
        }

        Batch started()
                throws InterruptedException
        {
            Batch batch = started.poll(STUCK_SECONDS, TimeUnit.SECONDS);
            assertThat(batch).as("a batch handed to the applier").isNotNull();
            return batch;
        }

        void proceed(int batches)
        {
            permits.release(batches);
        }

        @Override
        public Map<String, SourcePosition> committedPositions()
        {
            return Map.of();
        }

        @Override
        public void close()
        {
            calls.add("close");
        }
    }

    /** What the listener was told, on the sink's thread. */
    private static final class Outcomes
            implements FlushListener
    {
        final List<Batch> flushed = new ArrayList<>();
        final List<Batch> failed = new ArrayList<>();

        @Override
        public void flushed(Batch batch, long elapsedNanos)
        {
            flushed.add(batch);
        }

        @Override
        public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
        {
            failed.add(batch);
        }
    }
}
