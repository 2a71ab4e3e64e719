package io.pgsink.core.buffer;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;

import java.util.List;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * Everything one flush applies in one target transaction: the table batches in a fixed order
 * (by {@link TableId}) and, per source partition, the position of the last event included.
 *
 * @param tables dirty tables, ordered by table id
 * @param positions per source partition, the position to store with the data
 * @param events events merged into this batch
 * @param rejected changes the sink already refused (under {@code errors.tolerance=all}), to be sent
 *         to the dead-letter destination with this batch
 */
public record Batch(List<TableBatch> tables, Map<String, SourcePosition> positions, long events,
        List<RejectedRow> rejected)
{
    public Batch
    {
        tables = List.copyOf(requireNonNull(tables, "tables is null"));
        positions = Map.copyOf(requireNonNull(positions, "positions is null"));
        rejected = List.copyOf(requireNonNull(rejected, "rejected is null"));
    }

    public Batch(List<TableBatch> tables, Map<String, SourcePosition> positions, long events)
    {
        this(tables, positions, events, List.of());
    }

    /** The same batch with {@code table}'s changes replaced, e.g. without a rejected row. */
    public Batch withTable(TableBatch table)
    {
        List<TableBatch> replaced = new java.util.ArrayList<>(tables.size());
        for (TableBatch each : tables) {
            replaced.add(each.table().equals(table.table()) ? table : each);
        }
        return new Batch(replaced, positions, events, rejected);
    }
}
