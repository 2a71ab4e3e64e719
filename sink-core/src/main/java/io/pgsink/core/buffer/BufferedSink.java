package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongSupplier;

import static java.util.Objects.requireNonNull;

/**
 * The {@link Sink}: per-table {@link TableBuffer}s merged by key, flushed by a {@link FlushPolicy}
 * through a {@link BatchApplier}. When a flush fails, the buffers are kept as they were, so the
 * caller may retry it (the applier's batches are idempotent) or give up.
 *
 * <p>Between {@link #beginTransaction} and {@link #endTransaction} the policy's limits do not
 * flush: a source transaction is applied whole. Only its own size is bounded, by
 * {@code buffer.max.bytes}: the buffer then holds at most what it held when the transaction began
 * (less than the limit, or it would have flushed) plus the transaction, under twice the limit.
 *
 * <p>Pipelined ({@link FlushPolicy#pipelined()}, {@code flush.pipelined}), a flush waits for the
 * batch the previous one handed off, then hands its own immutable {@link Batch} to a
 * {@link BatchPipeline} and returns, so that the next batch is read and merged while this one is
 * encoded and applied. A batch that fails is kept by the pipeline, and the next {@link #flush}
 * (or {@link #awaitApplied}) applies it again before anything newer; the buffers meanwhile take new
 * events. {@link #committedPositions()} and the listener's {@code flushed} follow committed batches,
 * and are told on this sink's thread. Memory: each buffer flushes at half of
 * {@code buffer.max.bytes} ({@link FlushPolicy#flushBytes()}), so the batch in flight and the
 * buffer filling take about that together (a source transaction, which is not split, up to twice
 * as much, as unpipelined).
 *
 * <p>Not thread-safe: one thread owns it (a pipelined sink's applier thread only applies batches).
 */
public final class BufferedSink
        implements Sink
{
    private static final Logger log = LoggerFactory.getLogger(BufferedSink.class);

    private final String name;
    private final FlushPolicy policy;
    private final BatchApplier applier;
    private final FlushListener listener;
    private final LongSupplier nanoClock;
    private final TreeMap<TableId, TableBuffer> buffers = new TreeMap<>();
    private final Map<String, SourcePosition> pendingPositions = new HashMap<>();
    private final Map<String, SourcePosition> committedPositions;
    /** Present when pipelined: applies handed-off batches on a thread of its own. */
    private final Optional<BatchPipeline> pipeline;
    private final CommittedBatches committedBatches = new CommittedBatches();
    private final boolean tolerateRejectedRows;
    private final List<RejectedRow> rejected = new ArrayList<>();
    private long events;
    private long firstEventNanos;
    private long bytes;
    /** The source transaction being accepted, whose events are flushed together; empty between transactions. */
    private Optional<OpenTransaction> transaction = Optional.empty();

    public BufferedSink(String name, FlushPolicy policy, BatchApplier applier, FlushListener listener,
            LongSupplier nanoClock)
    {
        this(name, policy, applier, listener, nanoClock, false);
    }

    /**
     * @param tolerateRejectedRows {@code errors.tolerance=all}: an event the buffer cannot take
     *         (an update or delete of a table without a primary key, an unchanged TOAST value that
     *         cannot be filled) is passed on with the next batch as a {@link RejectedRow} instead of
     *         failing
     */
    public BufferedSink(String name, FlushPolicy policy, BatchApplier applier, FlushListener listener,
            LongSupplier nanoClock, boolean tolerateRejectedRows)
    {
        this.tolerateRejectedRows = tolerateRejectedRows;
        this.name = requireNonNull(name, "name is null");
        this.policy = requireNonNull(policy, "policy is null");
        this.applier = requireNonNull(applier, "applier is null");
        this.listener = requireNonNull(listener, "listener is null");
        this.nanoClock = requireNonNull(nanoClock, "nanoClock is null");
        this.committedPositions = new HashMap<>(applier.committedPositions());
        this.pipeline = policy.pipelined()
                ? Optional.of(new BatchPipeline(name, applier, committedBatches, nanoClock))
                : Optional.empty();
    }

    public BufferedSink(String name, FlushPolicy policy, BatchApplier applier)
    {
        this(name, policy, applier, FlushListener.NONE, System::nanoTime);
    }

    @Override
    public Accepted offer(ChangeEvent event)
    {
        TableBuffer buffer = buffers.get(event.table());
        if (buffer != null && event.operation() != Operation.TRUNCATE && buffer.schema() != null
                && buffer.schema() != event.schema() && !buffer.schema().equals(event.schema())) {
            if (transaction.isPresent() && events > transaction.get().eventsAtStart()) {
                // one buffer holds one schema: the part of the transaction before the change is applied now
                log.warn("{} - schema of {} changed inside source transaction {}: flushing the part of it buffered so "
                        + "far, so the target shows it partly applied until its end",
                        name, event.table(), transaction.get().id());
            }
            else {
                log.info("{} - schema of {} changed, flushing what was buffered with the old schema", name,
                        event.table());
            }
            flush();
            buffer = null;
        }
        if (buffer == null) {
            buffer = new TableBuffer(event.table(), applier.appendsHistory(event.table()));
            buffers.put(event.table(), buffer);
        }
        long before = buffer.bytes();
        try {
            buffer.add(event);
        }
        catch (SinkException e) {
            if (!tolerateRejectedRows || e.errorCode() == ErrorCode.TRANSIENT || e.errorCode() == ErrorCode.CONFIG) {
                throw e;
            }
            Object[] row = event.after() != null ? event.after() : event.before();
            TableSchema schema = event.schema();
            RowKey key = schema.hasKey() && row != null ? schema.keyOf(row) : RowKey.NONE;
            RowChange change = new RowChange(key, row, event.position(), event.operation(), event.sourceTimeMillis(),
                    false, false);
            rejected.add(new RejectedRow(event.table(), event.table(), schema, change, java.util.Optional.empty(),
                    e.getMessage()));
        }
        bytes += buffer.bytes() - before;
        pendingPositions.put(event.position().partition(), event.position());
        if (events++ == 0) {
            firstEventNanos = nanoClock.getAsLong();
        }
        if (transaction.isPresent()) {
            checkTransactionSize(transaction.get());
            return Accepted.BUFFERED;
        }
        return policy.isFull(events, bytes) ? Accepted.FULL : Accepted.BUFFERED;
    }

    @Override
    public void beginTransaction(String transactionId)
    {
        requireNonNull(transactionId, "transactionId is null");
        if (transaction.isPresent()) {
            throw new IllegalStateException(name + " - source transaction " + transactionId + " begins while "
                    + transaction.get().id() + " has not ended");
        }
        transaction = Optional.of(new OpenTransaction(transactionId, events, bytes));
    }

    @Override
    public boolean endTransaction()
    {
        if (transaction.isEmpty()) {
            throw new IllegalStateException(name + " - no source transaction to end");
        }
        transaction = Optional.empty();
        if (policy.isFull(events, bytes)) {
            flush();
            return true;
        }
        return false;
    }

    /**
     * Stops at a source transaction that alone takes {@code buffer.max.bytes}: flushing part of it
     * would show it half applied, and holding on would let it take any amount of memory.
     */
    private void checkTransactionSize(OpenTransaction open)
    {
        long transactionBytes = bytes - open.bytesAtStart();
        if (transactionBytes >= policy.flushBytes()) {
            throw new SinkException(ErrorCode.CONFIG, name + " - source transaction " + open.id() + " takes more than "
                    + (policy.pipelined()
                            ? "buffer.max.bytes/2 (" + policy.flushBytes() + " of " + policy.maxBytes()
                                    + " bytes: flush.pipelined=true keeps a second batch in flight)"
                            : "buffer.max.bytes (" + policy.maxBytes() + " bytes)")
                    + " after "
                    + (events - open.eventsAtStart()) + " of its events, at " + pendingPositions.values()
                    + ". With flush.boundary=transaction a source transaction is applied whole"
                    + " and must fit in the buffer: raise buffer.max.bytes (the heap must hold about twice as much), "
                    + "or set flush.boundary=batch to apply it across several flushes;"
                    + " nothing of it was applied, and pgsink resumes before it");
        }
    }

    @Override
    public boolean inTransaction()
    {
        return transaction.isPresent();
    }

    /**
     * Accepts a key change the source split into a delete of the old key and an insert of the new
     * one (Debezium does, marking them with the other key), as one update from the old key to the
     * new: unchanged TOAST values of the insert are filled from the old key's row, which is why the
     * two must not be flushed apart.
     */
    @Override
    public void acceptKeyChange(ChangeEvent delete, ChangeEvent insert)
    {
        if (delete.operation() != Operation.DELETE
                || (insert.operation() != Operation.INSERT && insert.operation() != Operation.READ)) {
            throw new IllegalArgumentException("Not a delete and an insert: " + delete + ", " + insert);
        }
        if (!delete.schema().equals(insert.schema())) {
            // the key change came with a schema change: apply them as they came
            accept(delete);
            accept(insert);
            return;
        }
        accept(ChangeEvent.update(insert.schema(), delete.before(), insert.after(), insert.position(),
                insert.sourceTimeMillis()));
    }

    @Override
    public void advance(SourcePosition position)
    {
        pendingPositions.put(position.partition(), position);
        if (events++ == 0) {
            firstEventNanos = nanoClock.getAsLong();
        }
    }

    @Override
    public boolean flushIfDue()
    {
        if (pipeline.isPresent() && pipeline.get().finished()) {
            // takes the outcome without waiting: positions follow, and a failure surfaces here (a flush applies it
            // again)
            pipeline.get().await();
        }
        if (transaction.isEmpty() && policy.isDue(events, firstEventNanos, nanoClock.getAsLong())) {
            flush();
            return true;
        }
        return false;
    }

    @Override
    public void flush()
    {
        if (pipeline.isPresent()) {
            // the batch in flight (or a failed one, applied again) commits before anything newer
            pipeline.get().await();
        }
        if (events == 0) {
            return;
        }
        List<TableBatch> tables = new ArrayList<>(buffers.size());
        for (TableBuffer buffer : buffers.values()) {
            if (!buffer.isEmpty()) {
                tables.add(buffer.toBatch());
            }
        }
        Batch batch = new Batch(tables, pendingPositions, events, rejected);
        long start = nanoClock.getAsLong();
        if (pipeline.isEmpty()) {
            try {
                applier.apply(batch);
            }
            catch (RuntimeException e) {
                committedBatches.flushFailed(batch, nanoClock.getAsLong() - start, e);
                throw e;
            }
        }
        pendingPositions.clear();
        rejected.clear();
        buffers.clear();
        events = 0;
        bytes = 0;
        // a flush inside a transaction (a schema change) leaves only the rest of it to bound
        transaction = transaction.map(open -> new OpenTransaction(open.id(), 0, 0));
        listener.handedOff(batch);
        if (pipeline.isPresent()) {
            pipeline.get().handOff(batch);
        }
        else {
            committedBatches.flushed(batch, nanoClock.getAsLong() - start);
        }
    }

    @Override
    public void awaitApplied()
    {
        if (pipeline.isPresent()) {
            pipeline.get().await();
        }
    }

    @Override
    public boolean applying()
    {
        return pipeline.isPresent() && pipeline.get().busy();
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        return Map.copyOf(committedPositions);
    }

    @Override
    public long bufferedEvents()
    {
        return events;
    }

    @Override
    public long bufferedBytes()
    {
        return bytes;
    }

    @Override
    public void close()
    {
        if (events > 0) {
            log.info("{} - closing with {} events not flushed; the source will resend them", name, events);
        }
        buffers.clear();
        try {
            pipeline.ifPresent(BatchPipeline::close);
        }
        finally {
            applier.close();
        }
    }

    /** A batch committed or failed, applied by {@link #flush} or, pipelined, by the applier thread. */
    private final class CommittedBatches
            implements FlushListener
    {
        @Override
        public void flushed(Batch batch, long elapsedNanos)
        {
            committedPositions.putAll(batch.positions());
            listener.flushed(batch, elapsedNanos);
        }

        @Override
        public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
        {
            listener.flushFailed(batch, elapsedNanos, failure);
        }
    }

    /** A source transaction being buffered, and what the buffer held when it began. */
    private record OpenTransaction(String id, long eventsAtStart, long bytesAtStart)
    {
        OpenTransaction
        {
            requireNonNull(id, "id is null");
        }
    }
}
