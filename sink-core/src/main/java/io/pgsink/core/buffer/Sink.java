package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.Map;

/**
 * What source adapters call: hand over change events in source order, and let the sink decide when
 * to flush them to the target. Each flush applies everything buffered (all tables) in one target
 * transaction, together with the source positions of the events it contains.
 *
 * <p>Lifecycle: create, read {@link #committedPositions()} to know where to resume the source, then
 * {@link #accept} events (which may flush, blocking the caller: that is the backpressure), call
 * {@link #flushIfDue()} when idle so a quiet stream still flushes within {@code flush.interval.ms},
 * {@link #flush()} before committing anything upstream, and {@link #close()}. Events buffered but
 * not flushed when the sink is closed are not applied; their positions were not stored either, so
 * the source resends them.
 *
 * <p>Not thread-safe: one thread owns a sink.
 */
public interface Sink
        extends AutoCloseable
{
    /**
     * Buffers one event; flushes first when its schema differs from what is buffered for the table,
     * and afterwards when the flush policy says the buffer is full ({@link #offer} and then
     * {@link #flush()} when it says {@link Accepted#FULL}).
     *
     * @return whether the buffer was full, and flushed
     * @throws SinkException when the event cannot be buffered or a flush fails; which of the two
     *         it was, only {@link #offer} tells
     */
    default Accepted accept(ChangeEvent event)
    {
        Accepted accepted = offer(event);
        if (accepted == Accepted.FULL) {
            flush();
        }
        return accepted;
    }

    /**
     * Buffers one event, flushing first when its schema differs from what is buffered for the table,
     * but never after: the caller flushes when it returns {@link Accepted#FULL}, before the next event.
     * Adapters that must know whether an event is held (to take it again after a failure, or not) use
     * this: when it returns, the event is buffered; when it throws, it is not (the flush before it,
     * or the event itself, failed), except for the {@link ErrorCode#CONFIG} failure of a source
     * transaction that outgrew the buffer, after which the sink is not to be used any more.
     *
     * @throws SinkException when the event cannot be buffered or the flush before it fails
     */
    Accepted offer(ChangeEvent event);

    /** What {@link #offer} did with an event. */
    enum Accepted
    {
        /** Buffered, with room for more. */
        BUFFERED,
        /** Buffered, and the flush policy says the buffer is full: the caller is to flush. */
        FULL,
    }

    /**
     * Accepts a key change that the source split into a delete of the old key and an insert of the
     * new key, as Debezium does (it marks them with the {@code __debezium.newkey} and
     * {@code __debezium.oldkey} headers): taken as one update, so that unchanged TOAST values of the
     * insert are filled from the old key's row. Adapters hold the delete until its insert arrives.
     */
    void acceptKeyChange(ChangeEvent delete, ChangeEvent insert);

    /**
     * Records that the source has reached {@code position} without a change to apply (a heartbeat,
     * a filtered event), so the position is stored with the next flush.
     */
    void advance(SourcePosition position);

    /**
     * Starts a source transaction (id {@code transactionId}, for messages): the events accepted
     * until {@link #endTransaction()} are flushed together, never some of them without the others,
     * so that every committed target state equals a committed source state. The buffer may then hold
     * more than {@code flush.max.events}; a transaction that alone takes {@code buffer.max.bytes}
     * fails {@link #accept} with a {@link ErrorCode#CONFIG} error instead of growing without bound.
     * A change of a table's schema inside the transaction still flushes (with a warning), since one
     * buffer holds one schema.
     *
     * @throws IllegalStateException when a transaction is open already
     */
    default void beginTransaction(String transactionId)
    {
        throw new UnsupportedOperationException(getClass().getName()
                + " does not flush on source transaction boundaries");
    }

    /**
     * Ends the source transaction {@link #beginTransaction} started, and flushes when the flush
     * policy says the buffer is full.
     *
     * @return whether it flushed
     */
    default boolean endTransaction()
    {
        throw new UnsupportedOperationException(getClass().getName()
                + " does not flush on source transaction boundaries");
    }

    /** Whether a source transaction is open ({@link #beginTransaction} without its {@link #endTransaction}). */
    default boolean inTransaction()
    {
        return false;
    }

    /**
     * Flushes when the oldest buffered event has waited {@code flush.interval.ms}; returns whether it flushed. Never
     * inside a source transaction.
     */
    boolean flushIfDue();

    /**
     * Applies everything buffered; does nothing when nothing is. With {@code flush.pipelined} it
     * first waits for the batch the previous flush handed off (applying it again first if it
     * failed before), then hands off what is buffered and returns while that applies: when it
     * returns, every batch handed off before the call has committed, but not necessarily this one
     * ({@link #awaitApplied()}).
     *
     * @throws SinkException when the batch waited for, or this one when not pipelined, fails; what
     *         failed is kept and applied again, before anything newer, by the next flush
     */
    void flush();

    /**
     * Waits until every batch a flush handed off has committed, so that {@link #committedPositions()}
     * covers everything flushed. Without {@code flush.pipelined} a flush commits before it returns,
     * and this does nothing.
     *
     * @throws SinkException when the batch in flight failed (it is kept, and applied again by the
     *         next call of this or {@link #flush()})
     */
    default void awaitApplied()
    {
    }

    /**
     * Whether a batch a flush handed off ({@code flush.pipelined}) has not been seen to commit yet:
     * its positions are not in {@link #committedPositions()}. Never waits; always false when not pipelined.
     */
    default boolean applying()
    {
        return false;
    }

    /**
     * Per source partition, the position stored with the last committed flush (or found in the target at start); a
     * pipelined flush moves it only once its batch committed and a call of this sink saw that.
     */
    Map<String, SourcePosition> committedPositions();

    /** Events accepted since the last flush. */
    long bufferedEvents();

    /** Estimated heap taken by buffered rows. */
    long bufferedBytes();

    @Override
    void close();
}
