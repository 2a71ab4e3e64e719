package io.pgsink.core.buffer;

import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What one flush does to one table: optionally truncate it first, then delete every touched key
 * and write every final row. Rows are in the order their keys were first touched.
 *
 * @param table the source table (routing to a target table is the applier's business)
 * @param schema the row shape of {@link #changes()}; empty only when the batch is a bare truncate
 * @param truncate whether the table is truncated before the changes are applied
 * @param changes one entry per touched key
 * @param rowsWithUnavailableValues how many changes still hold unavailable values to fill from the target
 * @param events how many events were merged into this batch
 */
public record TableBatch(TableId table, Optional<TableSchema> schema, boolean truncate, List<RowChange> changes,
        int rowsWithUnavailableValues, long events)
{
    public TableBatch
    {
        requireNonNull(table, "table is null");
        requireNonNull(schema, "schema is null");
        changes = List.copyOf(requireNonNull(changes, "changes is null"));
        if (schema.isEmpty() && !changes.isEmpty()) {
            throw new IllegalArgumentException("A batch with changes needs a schema");
        }
    }

    /** The same table batch with only {@code kept} of its changes. */
    public TableBatch withChanges(List<RowChange> kept)
    {
        int unavailable = 0;
        for (RowChange change : kept) {
            if (change.hasUnavailableValues()) {
                unavailable++;
            }
        }
        return new TableBatch(table, schema, truncate, kept, unavailable, events);
    }

    public long upserts()
    {
        long count = 0;
        for (RowChange change : changes) {
            if (!change.isDelete()) {
                count++;
            }
        }
        return count;
    }
}
