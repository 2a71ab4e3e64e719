package io.pgsink.merge.schema;

import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.table.TargetTable;

/**
 * History tables ({@code table.mode=history}, {@code history.table.include.list}): every change is
 * a row of its own, COPYed straight into the target in the flush transaction that stores the
 * source positions, with no staging table, delete or merge. The batch's commit and its positions
 * are one: a batch is applied again only when its transaction did not commit, so no change is
 * appended twice (see docs/concepts/history-and-soft-deletes.md for the one exception, a lost COMMIT answer that cannot
 * be settled).
 *
 * <p>A history table holds many rows per source key, so it cannot have the source's primary key:
 * the sink creates it without one (on Greenplum {@code DISTRIBUTED BY} the source key, so a key's
 * history lives on one segment), and refuses an existing table whose primary key does not include
 * the source position column.
 */
public final class HistoryTables
{
    private HistoryTables() {}

    public static void checkTarget(TableSchema source, TargetTable target, ChangeMetadata metadata)
    {
        if (target.primaryKey().isEmpty()) {
            return;
        }
        String position = "";
        for (ChangeMetadata.Column column : metadata.columns()) {
            if (column.kind() == ChangeMetadata.Kind.SOURCE_POSITION) {
                position = column.name();
            }
        }
        if (!target.primaryKey().contains(position)) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot append the history of " + source.table() + " to "
                    + target.id() + ": its primary key " + target.primaryKey()
                    + " would allow one row per key, but a history table gets a row per change. Drop the primary "
                    + "key, or make it (" + String.join(", ", source.keyColumns())
                    + (source.keyColumns().isEmpty() ? "" : ", ") + position + ").");
        }
    }
}
