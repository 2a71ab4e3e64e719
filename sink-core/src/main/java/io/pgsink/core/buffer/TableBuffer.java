package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The changes to one table since the last flush, merged by primary key.
 *
 * <p>Merge semantics, which make applying the merged buffer to any target state equal to applying
 * the events one by one:
 * <ul>
 * <li>Last change wins: a key keeps only its final state, a row to write or a delete.</li>
 * <li>Insert, snapshot read and update set the key's row. An update whose before-image has a
 *     different key first deletes the old key.</li>
 * <li>A delete marks the key deleted; a deleted key is still touched, so the flush deletes it.</li>
 * <li>Truncate drops everything buffered for the table and marks it truncated: the flush empties the
 *     target table first, then applies the changes that came after the truncate.</li>
 * <li>An {@link UnavailableValue unavailable} column (an unchanged TOASTed value) is filled from the
 *     key's earlier row in the buffer (for a key-changing update, the old key's row). What cannot be
 *     filled here is filled by the flush from the current target row.</li>
 * </ul>
 * A table without a primary key cannot be merged: its buffer only accepts inserts and appends them.
 *
 * <p>A history table ({@code table.mode=history}) is not merged either: every insert, read, update
 * and delete is appended as it came, a key-changing update as a delete of the old key followed by
 * the update, with unavailable values filled from the key's earlier image in the buffer (what is
 * still missing fails: a history row cannot be filled from the target); a truncate is not applied,
 * so the history of the table is kept.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
final class TableBuffer
{
    private final TableId table;
    private final boolean history;
    /**
     * History tables: each key's last row image in the buffer, to fill unavailable values of the key's later changes.
     */
    private final Map<RowKey, Object[]> lastImages = new HashMap<>();
    @Nullable
    private TableSchema schema;
    private boolean truncate;
    private final Map<RowKey, RowChange> entries = new LinkedHashMap<>();
    private final List<RowChange> appends = new ArrayList<>();
    private long bytes;
    private long events;
    private int rowsWithUnavailableValues;

    TableBuffer(TableId table)
    {
        this(table, false);
    }

    /** @param history whether every change is appended ({@code table.mode=history}) rather than merged by key */
    TableBuffer(TableId table, boolean history)
    {
        this.table = requireNonNull(table, "table is null");
        this.history = history;
    }

    /** The schema of the buffered rows; null while nothing but a truncate is buffered. */
    @Nullable
    TableSchema schema()
    {
        return schema;
    }

    boolean isEmpty()
    {
        return events == 0;
    }

    long bytes()
    {
        return bytes;
    }

    void add(ChangeEvent event)
    {
        events++;
        if (history) {
            if (event.operation() != Operation.TRUNCATE) {
                adoptSchema(event.schema());
                HistoryRows.append(this, event);
            }
            return;
        }
        if (event.operation() == Operation.TRUNCATE) {
            entries.clear();
            appends.clear();
            bytes = 0;
            rowsWithUnavailableValues = 0;
            truncate = true;
            return;
        }
        TableSchema eventSchema = event.schema();
        adoptSchema(eventSchema);
        if (!eventSchema.hasKey()) {
            append(event);
            return;
        }
        switch (event.operation()) {
            case INSERT, READ -> {
                RowKey key = eventSchema.keyOf(event.after());
                // the new row of a key change whose old key has its own delete: filled from it, not deleting it
                RowKey movedFrom = event.before() == null ? null : eventSchema.keyOf(event.before());
                upsert(event, key, null, key.equals(movedFrom) ? null : movedFrom);
            }
            case UPDATE -> {
                RowKey key = eventSchema.keyOf(event.after());
                RowKey oldKey = null;
                if (event.before() != null) {
                    RowKey beforeKey = eventSchema.keyOf(event.before());
                    if (!beforeKey.equals(key)) {
                        oldKey = beforeKey;
                    }
                }
                upsert(event, key, oldKey, oldKey);
            }
            case DELETE -> {
                RowKey key = eventSchema.keyOf(event.before());
                put(key, deleted(key, event));
            }
            case TRUNCATE -> throw new IllegalStateException("handled above");
        }
    }

    private void adoptSchema(TableSchema eventSchema)
    {
        if (schema == null) {
            schema = eventSchema;
        }
        else if (schema != eventSchema && !schema.equals(eventSchema)) {
            throw new IllegalStateException("Buffer of " + table + " holds rows of another schema; the sink must flush "
                    + "before a schema change");
        }
    }

    /** History tables: appends one row as it came ({@link HistoryRows}), remembering its image under its key. */
    void appendHistory(RowKey key, Object[] row, ChangeEvent event, Operation operation)
    {
        RowChange entry = new RowChange(key, row, row, null, event.position(), operation, event.sourceTimeMillis(),
                false, true);
        appends.add(entry);
        bytes += entry.bytes;
        if (key != RowKey.NONE && operation != Operation.DELETE) {
            lastImages.put(key, row);
        }
    }

    /** History tables: the last image of {@code key} in the buffer, or null. */
    Object @Nullable [] lastImage(RowKey key)
    {
        return lastImages.get(key);
    }

    TableId table()
    {
        return table;
    }

    /**
     * Sets {@code key}'s row. {@code oldKey}, when not null, is deleted (a key-changing update);
     * unavailable values come from {@code fillKey}'s row (the old key of a key change) or else from
     * {@code key}'s own.
     */
    private void upsert(ChangeEvent event, RowKey key, @Nullable RowKey oldKey, @Nullable RowKey fillKey)
    {
        Object[] row = event.after();
        RowChange existing = entries.get(key);
        // a new key of a key-changing update did not exist at the source before (keys are unique)
        boolean fresh = freshness(existing, fillKey != null || event.operation() == Operation.INSERT);
        RowChange previous = fillKey != null ? entries.get(fillKey) : existing;
        if (oldKey != null) {
            put(oldKey, deleted(oldKey, event));
        }
        boolean unavailable = fillUnavailable(row, previous == null ? null : previous.image);
        RowKey fillFrom = null;
        if (unavailable) {
            // what is still missing is in the target row of the key the row had before this batch
            RowKey sourceKey = fillKey != null ? fillKey : key;
            fillFrom = previous != null && previous.fillSource() != null ? previous.fillSource() : sourceKey;
            if (fillFrom.equals(key)) {
                fillFrom = null;
            }
        }
        put(key, new RowChange(key, row, row, fillFrom, event.position(), event.operation(), event.sourceTimeMillis(),
                unavailable, fresh));
    }

    /**
     * A delete entry for {@code key}. It keeps the key's last image and fill source: Debezium splits
     * a key change into a delete of the old key and an insert of the new one, whose unchanged TOAST
     * values must then come from the old key's image.
     */
    private RowChange deleted(RowKey key, ChangeEvent event)
    {
        RowChange existing = entries.get(key);
        boolean fresh = freshness(existing, false);
        if (existing == null) {
            return new RowChange(key, null, null, null, event.position(), Operation.DELETE, event.sourceTimeMillis(),
                    false, fresh);
        }
        return new RowChange(key, null, existing.image, existing.fillSource(), event.position(), Operation.DELETE,
                event.sourceTimeMillis(), false, fresh);
    }

    /**
     * Whether a key did not exist in the target before this batch ({@code existing} is its entry
     * in the buffer, if any), assuming the target held the source's state (as it does when
     * positions are stored with the data). A key keeps the freshness of its first change in the batch: an insert
     * creates a key that did not exist, a truncate earlier in the batch empties the table, anything else may touch an
     * existing row. Replayed events break the assumption; the applier detects that (a unique violation) and
     * applies the batch again without relying on it.
     */
    private boolean freshness(@Nullable RowChange existing, boolean createsKey)
    {
        if (existing != null) {
            return existing.isFresh();
        }
        return truncate || createsKey;
    }

    /** Fills unavailable values of {@code row} from {@code previous}; returns whether any are left. */
    private static boolean fillUnavailable(Object[] row, Object @Nullable [] previous)
    {
        boolean left = false;
        for (int i = 0; i < row.length; i++) {
            if (row[i] == UnavailableValue.INSTANCE) {
                if (previous != null && previous[i] != UnavailableValue.INSTANCE) {
                    row[i] = previous[i];
                }
                else {
                    left = true;
                }
            }
        }
        return left;
    }

    private List<String> unavailableColumns(Object[] row)
    {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < row.length; i++) {
            if (row[i] == UnavailableValue.INSTANCE) {
                names.add(requireNonNull(schema).columns().get(i).name());
            }
        }
        return names;
    }

    private void put(RowKey key, RowChange entry)
    {
        RowChange replaced = entries.put(key, entry);
        if (replaced != null) {
            bytes -= replaced.bytes;
            if (replaced.hasUnavailableValues()) {
                rowsWithUnavailableValues--;
            }
        }
        bytes += entry.bytes;
        if (entry.hasUnavailableValues()) {
            rowsWithUnavailableValues++;
        }
    }

    private void append(ChangeEvent event)
    {
        if (event.operation() != Operation.INSERT && event.operation() != Operation.READ) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply " + event.operation() + " to " + table
                    + " at " + event.position()
                    + ": the table has no primary key, so only inserts can be applied (append-only). Add a primary key "
                    + "to the source table.");
        }
        Object[] row = event.after();
        for (Object value : row) {
            if (value == UnavailableValue.INSTANCE) {
                throw new SinkException(ErrorCode.DATA, "Cannot append to " + table + " at " + event.position()
                        + ": the insert has unavailable (unchanged TOAST) values");
            }
        }
        // the row as its image, so that its values count towards buffer.max.bytes
        RowChange entry = new RowChange(RowKey.NONE, row, row, null, event.position(), event.operation(),
                event.sourceTimeMillis(), false, true);
        appends.add(entry);
        bytes += entry.bytes;
    }

    TableBatch toBatch()
    {
        List<RowChange> changes = new ArrayList<>(entries.size() + appends.size());
        changes.addAll(entries.values());
        changes.addAll(appends);
        return new TableBatch(table, Optional.ofNullable(schema), truncate, changes, rowsWithUnavailableValues, events);
    }
}
