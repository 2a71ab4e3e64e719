package io.pgsink.core;

import org.jetbrains.annotations.Nullable;

import static java.util.Objects.requireNonNull;

/**
 * The merged, final state of one key in a flush: either a row to write or, when {@link #row()} is
 * null, a key to delete.
 */
public final class RowChange
{
    private final RowKey key;
    private final Object @Nullable [] row;
    private final SourcePosition position;
    private final Operation operation;
    private final long sourceTimeMillis;
    private final boolean unavailableValues;
    private final boolean fresh;
    @Nullable
    private final RowKey fillFrom;

    RowChange(RowKey key, Object @Nullable [] row, SourcePosition position, Operation operation, long sourceTimeMillis, boolean unavailableValues, boolean fresh)
    {
        this(key, row, position, operation, sourceTimeMillis, unavailableValues, fresh, null);
    }

    RowChange(RowKey key, Object @Nullable [] row, SourcePosition position, Operation operation, long sourceTimeMillis, boolean unavailableValues, boolean fresh,
            @Nullable RowKey fillFrom)
    {
        this.operation = requireNonNull(operation, "operation is null");
        this.sourceTimeMillis = sourceTimeMillis;
        this.fresh = fresh;
        this.fillFrom = fillFrom;
        this.key = requireNonNull(key, "key is null");
        this.row = row;
        this.position = requireNonNull(position, "position is null");
        this.unavailableValues = unavailableValues;
    }

    public RowKey key()
    {
        return key;
    }

    /** The row to write, in the order of the batch's schema, or null when the key is deleted. */
    public Object @Nullable [] row()
    {
        return row;
    }

    public boolean isDelete()
    {
        return row == null;
    }

    /** Position of the last event that touched this key; named in errors about the row. */
    public SourcePosition position()
    {
        return position;
    }

    /**
     * The operation of the last event that touched this key ({@link Operation#DELETE} for a key a
     * key-changing update moved away from); in a history batch, the event's own.
     */
    public Operation operation()
    {
        return operation;
    }

    /** When the last event that touched this key was committed on the source, in epoch milliseconds; 0 when unknown. */
    public long sourceTimeMillis()
    {
        return sourceTimeMillis;
    }

    /**
     * Whether the key did not exist in the target before this batch, provided the target held the
     * source's state: the key's first change in the batch created it (an insert, the new key of a
     * key change) or came after a truncate. A fresh row can be written without deleting its key
     * first. Replayed events can make a fresh key exist after all; appliers must detect that
     * (a unique violation) and fall back to deleting the key.
     */
    public boolean isFresh()
    {
        return fresh;
    }

    /**
     * For a row with unavailable values whose key changed in this batch: the key whose current
     * target row holds them (the key before the change). Empty when they come from the row's own key.
     */
    public java.util.Optional<RowKey> fillFrom()
    {
        return java.util.Optional.ofNullable(fillFrom);
    }

    /** Whether {@link #row()} still holds {@link UnavailableValue#INSTANCE} that the flush must fill from the target. */
    public boolean hasUnavailableValues()
    {
        return unavailableValues;
    }
}
