package io.pgsink.merge.write;

import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The target (or the encoder) refused one identified row. The message names table, key, column,
 * source position and reason; {@link #change()} lets the error policy skip exactly that row.
 */
public final class RowRejectedException
        extends SinkException
{
    private final TableId sourceTable;
    private final TableId targetTable;
    private final RowChange change;
    @Nullable
    private final String column;
    private final String reason;

    RowRejectedException(ErrorCode errorCode, TableId sourceTable, TableId targetTable, RowChange change,
            @Nullable String column, String reason, Throwable cause)
    {
        super(errorCode, "Cannot write a row of " + targetTable + " key " + change.key()
                + (column == null ? "" : " column " + column)
                + " (from " + sourceTable + " at " + change.position() + "): " + reason, cause);
        this.sourceTable = requireNonNull(sourceTable, "sourceTable is null");
        this.targetTable = requireNonNull(targetTable, "targetTable is null");
        this.change = requireNonNull(change, "change is null");
        this.column = column;
        this.reason = requireNonNull(reason, "reason is null");
    }

    public TableId sourceTable()
    {
        return sourceTable;
    }

    public TableId targetTable()
    {
        return targetTable;
    }

    public RowChange change()
    {
        return change;
    }

    public Optional<String> column()
    {
        return Optional.ofNullable(column);
    }

    public String reason()
    {
        return reason;
    }
}
