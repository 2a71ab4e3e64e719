package io.pgsink.core.mapping;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.TableSchema;

import static java.util.Objects.requireNonNull;

/**
 * Rows of one source schema version projected onto the columns a {@link ColumnSelection} writes,
 * under their target names: {@link #target()} is the schema the rest of the sink sees. Resolved
 * once per schema version, so that projecting a row only copies the kept positions.
 *
 * <p>Immutable.
 */
public final class ColumnProjection
{
    private final TableSchema source;
    private final TableSchema target;
    /** For each target column, its position in the source row. */
    private final int[] sourceIndexes;
    /** Whether every source column is kept in place (renames only): rows need no copy. */
    private final boolean keepsRows;

    ColumnProjection(TableSchema source, TableSchema target, int[] sourceIndexes)
    {
        this.source = requireNonNull(source, "source is null");
        this.target = requireNonNull(target, "target is null");
        this.sourceIndexes = sourceIndexes.clone();
        boolean keeps = sourceIndexes.length == source.columnCount();
        for (int i = 0; keeps && i < sourceIndexes.length; i++) {
            keeps = sourceIndexes[i] == i;
        }
        this.keepsRows = keeps;
    }

    public TableSchema source()
    {
        return source;
    }

    /** The written columns, renamed, and the key by its target names. */
    public TableSchema target()
    {
        return target;
    }

    /** Whether this projection changes nothing: every column kept under its own name. */
    public boolean isIdentity()
    {
        return keepsRows && source.equals(target);
    }

    /** For each target column, the source column it is read from. */
    public String sourceColumn(int targetIndex)
    {
        return source.columns().get(sourceIndexes[targetIndex]).name();
    }

    /** The event with its rows projected; a truncate or an identity projection gives it back unchanged. */
    public ChangeEvent apply(ChangeEvent event)
    {
        if (event.operation() == Operation.TRUNCATE || isIdentity()) {
            return event;
        }
        Object[] before = event.before() == null ? null : row(event.before());
        Object[] after = event.after() == null ? null : row(event.after());
        return switch (event.operation()) {
            case INSERT, READ -> before == null
                    ? ChangeEvent.insert(target, event.operation(), after, event.position(), event.sourceTimeMillis())
                    : ChangeEvent.insertMovedFrom(target, before, after, event.position(), event.sourceTimeMillis());
            case UPDATE -> ChangeEvent.update(target, before, after, event.position(), event.sourceTimeMillis());
            case DELETE -> ChangeEvent.delete(target, before, event.position(), event.sourceTimeMillis());
            case TRUNCATE -> event;
        };
    }

    private Object[] row(Object[] values)
    {
        if (keepsRows) {
            return values;
        }
        Object[] projected = new Object[sourceIndexes.length];
        for (int i = 0; i < sourceIndexes.length; i++) {
            projected[i] = values[sourceIndexes[i]];
        }
        return projected;
    }
}
