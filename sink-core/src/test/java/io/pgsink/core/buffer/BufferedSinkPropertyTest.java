package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The merge buffer's contract: merging a stream of changes and applying the merged batches gives
 * the same target as applying the changes one by one, for any starting state, any mix of inserts,
 * updates, key changes, deletes and truncates, SQL NULLs in any column but the key, and any flush
 * boundaries.
 */
class BufferedSinkPropertyTest
{
    private static final TableId TABLE = TableId.of("s", "t");
    private static final TableSchema SCHEMA = TableSchema.of(TABLE, List.of("id", "a", "big"), List.of("id"));
    private static final int KEYS = 6;

    /** Without TOAST: the target may start in any state, unrelated to the source. */
    @Property(tries = 500)
    void mergedEqualsSequentialFromAnyState(@ForAll("steps") List<Step> steps, @ForAll("state") Map<RowKey, List<Object>> start, @ForAll @IntRange(min = 1, max = 12) int flushEvery)
    {
        Map<RowKey, List<Object>> expected = new LinkedHashMap<>(start);
        InMemoryTarget target = new InMemoryTarget();
        target.table(TABLE).putAll(start);
        try (BufferedSink sink = new BufferedSink("test", new FlushPolicy(flushEvery, Long.MAX_VALUE, 0), target)) {
            int offset = 0;
            for (Step step : steps) {
                ChangeEvent event = step.toEvent(++offset, null);
                applySequentially(expected, event);
                sink.accept(event);
            }
            sink.flush();
            assertThat(sink.bufferedEvents()).isZero();
            assertThat(sink.committedPositions()).isEqualTo(steps.isEmpty() ? Map.of() : Map.of("p", new SourcePosition("p", String.valueOf(offset))));
        }
        assertThat(target.table(TABLE)).isEqualTo(expected);
        assertThat(target.positions).isEqualTo(steps.isEmpty() ? Map.of() : Map.of("p", new SourcePosition("p", String.valueOf(steps.size()))));
    }

    /**
     * With TOAST: the source omits unchanged values of the "big" column in updates. The target
     * starts equal to the source (as it does after a snapshot), and ends equal to it.
     */
    @Property(tries = 500)
    void unavailableValuesAreFilledFromBufferOrTarget(@ForAll("steps") List<Step> steps, @ForAll("state") Map<RowKey, List<Object>> start, @ForAll @IntRange(min = 1, max = 12) int flushEvery)
    {
        Map<RowKey, List<Object>> source = new LinkedHashMap<>(start);
        InMemoryTarget target = new InMemoryTarget();
        target.table(TABLE).putAll(start);
        Map<RowKey, List<Object>> removed = new java.util.HashMap<>();
        try (BufferedSink sink = new BufferedSink("test", new FlushPolicy(flushEvery, Long.MAX_VALUE, 0), target)) {
            int offset = 0;
            for (Step step : steps) {
                ChangeEvent event = step.toEvent(++offset, source);
                if (step.kind() == Kind.SPLIT_KEY_CHANGE && event.operation() == Operation.UPDATE && event.before() != null) {
                    // as Debezium sends a key change: delete the old key, then insert the new one marked with the old key
                    ChangeEvent delete = ChangeEvent.delete(SCHEMA, event.before().clone(), event.position(), 0);
                    applySequentially(source, delete, removed);
                    applySequentially(source, event, removed);
                    if (offset % 2 == 0) {
                        sink.acceptKeyChange(delete, ChangeEvent.insert(SCHEMA, event.after(), event.position(), 0));
                    }
                    else {
                        // as the Kafka Connect sink may get them from two partitions: the create, marked
                        // with the old key, first (any flush may fall between the two)
                        sink.accept(ChangeEvent.insertMovedFrom(SCHEMA, event.before().clone(), event.after(), event.position(), 0));
                        sink.accept(delete);
                    }
                    continue;
                }
                applySequentially(source, event, removed);
                sink.accept(event);
            }
            sink.flush();
        }
        assertThat(target.table(TABLE)).isEqualTo(source);
        // with a consistent stream, a key the buffer calls fresh never exists in the target yet
        assertThat(target.freshConflicts).isZero();
    }

    /** The sequential reference: what each event does to a table, one at a time. */
    private static void applySequentially(Map<RowKey, List<Object>> rows, ChangeEvent event)
    {
        applySequentially(rows, event, new java.util.HashMap<>());
    }

    /** {@code removed}: rows deleted so far, for the insert half of a split key change that refers to one. */
    private static void applySequentially(Map<RowKey, List<Object>> rows, ChangeEvent event, Map<RowKey, List<Object>> removed)
    {
        switch (event.operation()) {
            case INSERT, READ -> rows.put(SCHEMA.keyOf(event.after()), row(event.after()));
            case UPDATE -> {
                RowKey key = SCHEMA.keyOf(event.after());
                RowKey oldKey = event.before() == null ? key : SCHEMA.keyOf(event.before());
                List<Object> current = rows.remove(oldKey);
                if (current == null) {
                    current = removed.get(oldKey);
                }
                List<Object> row = new ArrayList<>(row(event.after()));
                for (int i = 0; i < row.size(); i++) {
                    if (row.get(i) == UnavailableValue.INSTANCE) {
                        row.set(i, current.get(i));
                    }
                }
                rows.put(key, Collections.unmodifiableList(row));
            }
            case DELETE -> {
                RowKey key = SCHEMA.keyOf(event.before());
                List<Object> row = rows.remove(key);
                if (row != null) {
                    removed.put(key, row);
                }
            }
            case TRUNCATE -> rows.clear();
        }
    }

    /** A row as the reference keeps it: a fixed-size list that may hold SQL NULLs (so not {@code List.of}). */
    private static List<Object> row(Object[] values)
    {
        return Collections.unmodifiableList(Arrays.asList(values.clone()));
    }

    @Provide
    Arbitrary<Map<RowKey, List<Object>>> state()
    {
        return Arbitraries.integers().between(0, KEYS - 1).set().ofMaxSize(KEYS).map(keys -> {
            Map<RowKey, List<Object>> rows = new LinkedHashMap<>();
            for (int key : keys) {
                // every third starting row has NULL in "a", every fourth in "big"
                rows.put(new RowKey(new Object[] {(long) key}), row(new Object[] {(long) key, key % 3 == 0 ? null : "start" + key, key % 4 == 0 ? null : "big-start" + key}));
            }
            return rows;
        });
    }

    @Provide
    Arbitrary<List<Step>> steps()
    {
        Arbitrary<Step> step = Combinators.combine(
                Arbitraries.of(Kind.values()),
                Arbitraries.integers().between(0, KEYS - 1),
                Arbitraries.integers().between(0, KEYS - 1),
                Arbitraries.integers().between(0, 1000))
                .as(Step::new);
        return step.list().ofMaxSize(60);
    }

    enum Kind
    {
        INSERT, READ, UPDATE, UPDATE_KEEPING_BIG, UPDATE_KEY, SPLIT_KEY_CHANGE, DELETE, TRUNCATE
    }

    record Step(Kind kind, int key, int otherKey, int value)
    {
        /**
         * Turns the step into an event. With a {@code source} state, the step follows what a real
         * source could emit: updates and deletes only of existing keys, unavailable values only
         * where the row exists; without one, anything goes (and no TOAST).
         */
        ChangeEvent toEvent(int offset, Map<RowKey, List<Object>> source)
        {
            SourcePosition position = new SourcePosition("p", String.valueOf(offset));
            Long id = (long) key;
            // SQL NULLs: in "a" for every fifth value, in "big" for every seventh
            Object[] row = {id, value % 5 == 0 ? null : "v" + value, value % 7 == 0 ? null : "big" + value};
            boolean exists = source == null || source.containsKey(new RowKey(new Object[] {id}));
            Kind effective = kind;
            if (source != null && !exists && kind != Kind.TRUNCATE) {
                effective = Kind.INSERT;
            }
            if (source != null && exists && kind == Kind.INSERT) {
                // the source cannot insert an existing key
                effective = Kind.UPDATE;
            }
            switch (effective) {
                case INSERT -> {
                    return ChangeEvent.insert(SCHEMA, row, position, 0);
                }
                case READ -> {
                    return ChangeEvent.insert(SCHEMA, Operation.READ, row, position, 0);
                }
                case UPDATE -> {
                    return ChangeEvent.update(SCHEMA, null, row, position, 0);
                }
                case UPDATE_KEEPING_BIG -> {
                    Object[] after = {id, row[1], source == null ? row[2] : UnavailableValue.INSTANCE};
                    return ChangeEvent.update(SCHEMA, new Random(value).nextBoolean() ? null : new Object[] {id, null, null}, after, position, 0);
                }
                case UPDATE_KEY, SPLIT_KEY_CHANGE -> {
                    Long newId = (long) otherKey;
                    if (source != null && newId.equals(id)) {
                        return ChangeEvent.update(SCHEMA, null, row, position, 0);
                    }
                    if (source != null && source.containsKey(new RowKey(new Object[] {newId}))) {
                        // the source cannot move a row onto an existing key
                        return ChangeEvent.delete(SCHEMA, new Object[] {id, null, null}, position, 0);
                    }
                    // with a source, the big value may be unchanged: it must come from the old key's row
                    Object big = source != null && value % 2 == 0 ? UnavailableValue.INSTANCE : value % 7 == 0 ? null : "big-moved" + value;
                    return ChangeEvent.update(SCHEMA, new Object[] {id, null, null}, new Object[] {newId, value % 5 == 0 ? null : "moved" + value, big}, position, 0);
                }
                case DELETE -> {
                    return ChangeEvent.delete(SCHEMA, new Object[] {id, null, null}, position, 0);
                }
                case TRUNCATE -> {
                    return ChangeEvent.truncate(TABLE, position, 0);
                }
            }
            throw new IllegalStateException();
        }
    }
}
