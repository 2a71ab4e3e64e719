package io.pgsink.core;

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
 */
public record Batch(List<TableBatch> tables, Map<String, SourcePosition> positions, long events)
{
    public Batch
    {
        tables = List.copyOf(requireNonNull(tables, "tables is null"));
        positions = Map.copyOf(requireNonNull(positions, "positions is null"));
    }
}
