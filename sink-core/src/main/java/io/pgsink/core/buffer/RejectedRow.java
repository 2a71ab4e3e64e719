package io.pgsink.core.buffer;

import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A change the target refused and the error policy ({@code errors.tolerance=all}) skipped: the
 * rest of its batch was applied without it.
 *
 * @param table the source table
 * @param target the target table
 * @param schema the row shape of {@link #change()}
 * @param change the merged change of one key; its position is the last event that touched the key
 * @param column the column at fault, when the target or the encoder said which
 * @param reason why, without row values
 */
public record RejectedRow(TableId table, TableId target, TableSchema schema, RowChange change, Optional<String> column,
        String reason)
{
    public RejectedRow
    {
        requireNonNull(table, "table is null");
        requireNonNull(target, "target is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(change, "change is null");
        requireNonNull(column, "column is null");
        requireNonNull(reason, "reason is null");
    }

    /** {@code "s"."t" key (42) column c at offset 7 of p: reason}, for logs and errors. */
    public String describe()
    {
        return target + " key " + change.key() + column.map(name -> " column " + name).orElse("") + " (from " + table
                + " at " + change.position() + "): " + reason;
    }
}
