package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * How a change event becomes rows of a history table ({@code table.mode=history}): one row per
 * event, in the order the source sent them, nothing merged.
 * <ul>
 * <li>An insert, snapshot read or update appends its new row.</li>
 * <li>An update whose key changed first appends a delete of the old key (its before image), so
 *     that the old key's history ends where the new key's starts.</li>
 * <li>A delete appends its before image (at least the key; the source sends the other columns
 *     only with REPLICA IDENTITY FULL, else they are NULL).</li>
 * </ul>
 * An unavailable value (an unchanged TOASTed column) of a new row is filled from the key's earlier
 * row in the buffer; history rows are never read back from the target, so one that cannot be
 * filled there fails, naming table, key, column and position.
 */
final class HistoryRows
{
    private HistoryRows() {}

    static void append(TableBuffer buffer, ChangeEvent event)
    {
        TableSchema schema = event.schema();
        switch (event.operation()) {
            case INSERT, READ, UPDATE -> {
                Object[] row = event.after();
                RowKey key = schema.hasKey() ? schema.keyOf(row) : RowKey.NONE;
                RowKey fillKey = key;
                if (event.before() != null && schema.hasKey()) {
                    RowKey beforeKey = schema.keyOf(event.before());
                    if (!beforeKey.equals(key)) {
                        fillKey = beforeKey;
                        if (event.operation() == Operation.UPDATE) {
                            buffer.appendHistory(beforeKey, event.before(), event, Operation.DELETE);
                        }
                    }
                }
                fill(buffer, event, key, row, key == RowKey.NONE ? null : buffer.lastImage(fillKey));
                buffer.appendHistory(key, row, event, event.operation());
            }
            case DELETE -> {
                Object[] before = event.before();
                buffer.appendHistory(schema.hasKey() ? schema.keyOf(before) : RowKey.NONE, before, event,
                        Operation.DELETE);
            }
            case TRUNCATE -> throw new IllegalStateException("A history table does not apply truncates");
        }
    }

    private static void fill(TableBuffer buffer, ChangeEvent event, RowKey key, Object[] row,
            Object @Nullable [] previous)
    {
        List<String> missing = null;
        for (int i = 0; i < row.length; i++) {
            if (row[i] != UnavailableValue.INSTANCE) {
                continue;
            }
            if (previous != null && previous[i] != UnavailableValue.INSTANCE) {
                row[i] = previous[i];
            }
            else {
                if (missing == null) {
                    missing = new ArrayList<>();
                }
                missing.add(event.schema().columns().get(i).name());
            }
        }
        if (missing != null) {
            throw new SinkException(ErrorCode.DATA, "Cannot append " + event.operation() + " of key " + key
                    + " to the history of " + buffer.table() + " at " + event.position()
                    + ": the source did not send the unchanged TOAST value(s) of column(s) " + missing
                    + " and a history row is not filled from the target;"
                    + " set REPLICA IDENTITY FULL on the source table so that every change carries the whole row.");
        }
    }
}
