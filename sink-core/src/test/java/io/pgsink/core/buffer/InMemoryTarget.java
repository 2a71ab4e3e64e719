package io.pgsink.core.buffer;

import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link BatchApplier} over an in-memory table, applying batches exactly as the SQL flush does:
 * truncate, fill unavailable values from the current row, delete every touched key, insert every
 * final row, store positions.
 */
final class InMemoryTarget
        implements BatchApplier
{
    final Map<TableId, Map<RowKey, List<Object>>> tables = new HashMap<>();
    final Map<String, SourcePosition> positions = new HashMap<>();
    final List<Batch> batches = new ArrayList<>();
    RuntimeException failNext;
    /** Batches whose fresh keys already existed, so they were applied again deleting every key. */
    int freshConflicts;

    Map<RowKey, List<Object>> table(TableId table)
    {
        return tables.computeIfAbsent(table, ignored -> new LinkedHashMap<>());
    }

    @Override
    public void apply(Batch batch)
    {
        if (failNext != null) {
            RuntimeException failure = failNext;
            failNext = null;
            throw failure;
        }
        batches.add(batch);
        Map<TableId, Map<RowKey, List<Object>>> snapshot = new HashMap<>();
        tables.forEach((table, rows) -> snapshot.put(table, new LinkedHashMap<>(rows)));
        if (!applyTables(batch, true)) {
            // like the SQL applier: a fresh key existed after all (replayed events), so apply again deleting every key
            freshConflicts++;
            tables.clear();
            tables.putAll(snapshot);
            applyTables(batch, false);
        }
        positions.putAll(batch.positions());
    }

    private boolean applyTables(Batch batch, boolean trustFreshKeys)
    {
        for (TableBatch tableBatch : batch.tables()) {
            Map<RowKey, List<Object>> rows = table(tableBatch.table());
            if (tableBatch.truncate()) {
                rows.clear();
            }
            Map<RowKey, List<Object>> filled = new HashMap<>();
            for (RowChange change : tableBatch.changes()) {
                if (change.hasUnavailableValues()) {
                    List<Object> current = rows.get(change.fillFrom().orElse(change.key()));
                    if (current == null) {
                        throw new SinkException(ErrorCode.DATA, "no target row to fill " + change.key());
                    }
                    List<Object> row = new ArrayList<>(Arrays.asList(change.row()));
                    for (int i = 0; i < row.size(); i++) {
                        if (row.get(i) == UnavailableValue.INSTANCE) {
                            row.set(i, current.get(i));
                        }
                    }
                    filled.put(change.key(), row);
                }
            }
            for (RowChange change : tableBatch.changes()) {
                if (!(trustFreshKeys && change.isFresh() && !change.isDelete())) {
                    rows.remove(change.key());
                }
            }
            for (RowChange change : tableBatch.changes()) {
                if (!change.isDelete()) {
                    List<Object> row = filled.containsKey(change.key()) ? filled.get(change.key()) : Arrays.asList(change.row().clone());
                    if (row.contains(UnavailableValue.INSTANCE)) {
                        throw new AssertionError("unavailable value reached the target");
                    }
                    if (rows.put(change.key(), row) != null && !tableBatch.schema().orElseThrow().keyColumns().isEmpty()) {
                        // a unique violation in SQL
                        return false;
                    }
                }
            }
        }
        return true;
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        return Map.copyOf(positions);
    }

    @Override
    public void close() {}
}
