package io.pgsink.core.mapping;

import io.pgsink.core.buffer.Sink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;

import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

import static java.util.Objects.requireNonNull;

/**
 * A {@link Sink} that hands events on with their rows projected by a {@link ColumnSelection}
 * ({@code column.include.list}, {@code column.exclude.list}, {@code column.rename}): the sink it
 * wraps, and everything behind it (merge, staging, TOAST fill, auto-create), sees only the written
 * columns under their target names. The selection is checked against each table's schema when
 * its first event (or a new schema version) arrives; a selection that does not fit stops the sink
 * with a {@link ErrorCode#CONFIG} error naming the table and columns.
 *
 * <p>Not thread-safe: owned by the thread that owns the wrapped sink.
 */
public final class ColumnSelectingSink
        implements Sink
{
    private final Sink delegate;
    private final ColumnSelection selection;
    private final UnaryOperator<TableId> sourceTableOf;
    /** The projection of each table's schema version last seen. */
    private final Map<TableId, ColumnProjection> projections = new HashMap<>();

    private ColumnSelectingSink(Sink delegate, ColumnSelection selection, UnaryOperator<TableId> sourceTableOf)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
        this.selection = requireNonNull(selection, "selection is null");
        this.sourceTableOf = requireNonNull(sourceTableOf, "sourceTableOf is null");
    }

    /**
     * {@code sink} itself when {@code selection} writes every column under its own name; otherwise
     * the projecting sink, for events named by their source table.
     */
    public static Sink wrap(Sink sink, ColumnSelection selection)
    {
        return wrap(sink, selection, UnaryOperator.identity());
    }

    /**
     * As {@link #wrap(Sink, ColumnSelection)}, for events named by their target table:
     * {@code sourceTableOf} gives the source table the selection's entries are matched against.
     */
    public static Sink wrap(Sink sink, ColumnSelection selection, UnaryOperator<TableId> sourceTableOf)
    {
        return selection.isEmpty() ? sink : new ColumnSelectingSink(sink, selection, sourceTableOf);
    }

    @Override
    public Accepted offer(ChangeEvent event)
    {
        return delegate.offer(project(event));
    }

    @Override
    public void acceptKeyChange(ChangeEvent delete, ChangeEvent insert)
    {
        delegate.acceptKeyChange(project(delete), project(insert));
    }

    private ChangeEvent project(ChangeEvent event)
    {
        if (event.operation() == Operation.TRUNCATE) {
            return event;
        }
        TableSchema schema = event.schema();
        ColumnProjection projection = projections.get(schema.table());
        if (projection == null || (projection.source() != schema && !projection.source().equals(schema))) {
            projection = selection.project(sourceTableOf.apply(schema.table()), schema);
            projections.put(schema.table(), projection);
        }
        return projection.apply(event);
    }

    @Override
    public void advance(SourcePosition position)
    {
        delegate.advance(position);
    }

    @Override
    public void beginTransaction(String transactionId)
    {
        delegate.beginTransaction(transactionId);
    }

    @Override
    public boolean endTransaction()
    {
        return delegate.endTransaction();
    }

    @Override
    public boolean inTransaction()
    {
        return delegate.inTransaction();
    }

    @Override
    public boolean flushIfDue()
    {
        return delegate.flushIfDue();
    }

    @Override
    public void flush()
    {
        delegate.flush();
    }

    @Override
    public void awaitApplied()
    {
        delegate.awaitApplied();
    }

    @Override
    public boolean applying()
    {
        return delegate.applying();
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        return delegate.committedPositions();
    }

    @Override
    public long bufferedEvents()
    {
        return delegate.bufferedEvents();
    }

    @Override
    public long bufferedBytes()
    {
        return delegate.bufferedBytes();
    }

    @Override
    public void close()
    {
        delegate.close();
    }
}
