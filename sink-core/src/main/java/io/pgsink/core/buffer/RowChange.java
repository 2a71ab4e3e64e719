package io.pgsink.core.buffer;

import io.pgsink.core.change.Operation;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.UnavailableValue;
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
    /**
     * The key whose target row fills the values still unavailable, when it is not {@link #key}; kept by deletes too
     * ({@link TableBuffer}).
     */
    @Nullable
    private final RowKey fillFrom;
    /**
     * The key's last known row image: the row, or for a delete the row the key had before it in
     * the buffer, from which {@link TableBuffer} fills a later change of the key (Debezium splits
     * a key change into a delete and an insert).
     */
    final Object @Nullable [] image;
    /** The heap this change takes in its {@link TableBuffer} ({@link ValueSizes}). */
    final long bytes;

    RowChange(RowKey key, Object @Nullable [] row, SourcePosition position, Operation operation, long sourceTimeMillis,
            boolean unavailableValues, boolean fresh)
    {
        this(key, row, row, null, position, operation, sourceTimeMillis, unavailableValues, fresh);
    }

    /**
     * A buffered change, which the buffer's batch hands on as it is, so that merging allocates
     * one object per change.
     */
    RowChange(RowKey key, Object @Nullable [] row, Object @Nullable [] image, @Nullable RowKey fillFrom,
            SourcePosition position, Operation operation, long sourceTimeMillis,
            boolean unavailableValues, boolean fresh)
    {
        this.operation = requireNonNull(operation, "operation is null");
        this.sourceTimeMillis = sourceTimeMillis;
        this.fresh = fresh;
        this.fillFrom = fillFrom;
        this.key = requireNonNull(key, "key is null");
        this.row = row;
        this.image = image;
        this.position = requireNonNull(position, "position is null");
        this.unavailableValues = unavailableValues;
        this.bytes = ValueSizes.ENTRY_OVERHEAD + ValueSizes.position(position)
                + (image == null ? 0 : ValueSizes.row(image));
    }

    /**
     * The key whose row fills this key's unavailable values, whatever this change is ({@link #fillFrom()} tells it only
     * for rows still to fill).
     */
    @Nullable
    RowKey fillSource()
    {
        return fillFrom;
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
        return unavailableValues ? java.util.Optional.ofNullable(fillFrom) : java.util.Optional.empty();
    }

    /**
     * Whether {@link #row()} still holds {@link UnavailableValue#INSTANCE} that the flush must fill from the target.
     */
    public boolean hasUnavailableValues()
    {
        return unavailableValues;
    }
}
