package io.pgsink.core.change;

import org.jetbrains.annotations.Nullable;

import static java.util.Objects.requireNonNull;

/**
 * One change to one row (or, for {@link Operation#TRUNCATE}, to a whole table), as delivered by a
 * source adapter. Row images are value arrays in the order of {@link #schema()}'s columns; a value is
 * {@code null} for SQL NULL and {@link UnavailableValue#INSTANCE} for an unchanged TOASTed column.
 *
 * <p>The sink takes ownership of the value arrays when it accepts the event: the adapter must not
 * reuse or change them afterwards (the buffer fills unavailable values in place).
 */
public final class ChangeEvent
{
    private final TableId table;
    private final Operation operation;
    @Nullable
    private final TableSchema schema;
    private final Object @Nullable [] before;
    private final Object @Nullable [] after;
    private final SourcePosition position;
    private final long sourceTimeMillis;

    private ChangeEvent(TableId table, Operation operation, @Nullable TableSchema schema, Object @Nullable [] before,
            Object @Nullable [] after, SourcePosition position, long sourceTimeMillis)
    {
        this.table = requireNonNull(table, "table is null");
        this.operation = requireNonNull(operation, "operation is null");
        this.schema = schema;
        this.before = before;
        this.after = after;
        this.position = requireNonNull(position, "position is null");
        this.sourceTimeMillis = sourceTimeMillis;
        if (schema != null) {
            checkWidth(before, schema, "before");
            checkWidth(after, schema, "after");
        }
    }

    /** A new row, or one read by a snapshot ({@code operation} {@link Operation#INSERT} or {@link Operation#READ}). */
    public static ChangeEvent insert(TableSchema schema, Operation operation, Object[] after, SourcePosition position,
            long sourceTimeMillis)
    {
        if (operation != Operation.INSERT && operation != Operation.READ) {
            throw new IllegalArgumentException("Not an insert operation: " + operation);
        }
        return new ChangeEvent(schema.table(), operation, schema, null, requireNonNull(after, "after is null"),
                position, sourceTimeMillis);
    }

    public static ChangeEvent insert(TableSchema schema, Object[] after, SourcePosition position, long sourceTimeMillis)
    {
        return insert(schema, Operation.INSERT, after, position, sourceTimeMillis);
    }

    /**
     * The new row of a primary-key change whose old key is deleted by an event of its own (Debezium's
     * create with the {@code __debezium.oldkey} header): an insert whose {@linkplain UnavailableValue
     * unavailable} values are those of the row under {@code oldKeyRow}'s key (its key columns are
     * read, the rest ignored), from the buffer or the target. Unlike a key-changing
     * {@linkplain #update update}, it does not delete the old key: the delete comes in its own event,
     * in the order the source gave it relative to other changes of that key.
     */
    public static ChangeEvent insertMovedFrom(TableSchema schema, Object[] oldKeyRow, Object[] after,
            SourcePosition position, long sourceTimeMillis)
    {
        return new ChangeEvent(schema.table(), Operation.INSERT, schema, requireNonNull(oldKeyRow, "oldKeyRow is null"),
                requireNonNull(after, "after is null"), position, sourceTimeMillis);
    }

    /**
     * A changed row. {@code before} may be null (PostgreSQL sends the old image only with REPLICA
     * IDENTITY FULL, or the old key when the key changed); when given and its key differs from the
     * new one, the old key is deleted.
     */
    public static ChangeEvent update(TableSchema schema, Object @Nullable [] before, Object[] after,
            SourcePosition position, long sourceTimeMillis)
    {
        return new ChangeEvent(schema.table(), Operation.UPDATE, schema, before, requireNonNull(after, "after is null"),
                position, sourceTimeMillis);
    }

    /** A removed row; {@code before} needs at least the key columns. */
    public static ChangeEvent delete(TableSchema schema, Object[] before, SourcePosition position,
            long sourceTimeMillis)
    {
        return new ChangeEvent(schema.table(), Operation.DELETE, schema, requireNonNull(before, "before is null"), null,
                position, sourceTimeMillis);
    }

    public static ChangeEvent truncate(TableId table, SourcePosition position, long sourceTimeMillis)
    {
        return new ChangeEvent(table, Operation.TRUNCATE, null, null, null, position, sourceTimeMillis);
    }

    public TableId table()
    {
        return table;
    }

    public Operation operation()
    {
        return operation;
    }

    /**
     * The row shape; every operation but {@link Operation#TRUNCATE} has one.
     *
     * @throws IllegalStateException for a truncate
     */
    public TableSchema schema()
    {
        if (schema == null) {
            throw new IllegalStateException("A truncate event of " + table + " has no row schema");
        }
        return schema;
    }

    public Object @Nullable [] before()
    {
        return before;
    }

    public Object @Nullable [] after()
    {
        return after;
    }

    public SourcePosition position()
    {
        return position;
    }

    /** When the change was committed on the source, in epoch milliseconds; 0 when unknown. */
    public long sourceTimeMillis()
    {
        return sourceTimeMillis;
    }

    private static void checkWidth(Object @Nullable [] values, TableSchema schema, String name)
    {
        if (values != null && values.length != schema.columnCount()) {
            throw new IllegalArgumentException(name + " image of " + schema.table() + " has " + values.length
                    + " values, the schema has " + schema.columnCount() + " columns");
        }
    }

    @Override
    public String toString()
    {
        // no row values: they must not reach logs above TRACE
        return operation + " " + table + " at " + position;
    }
}
