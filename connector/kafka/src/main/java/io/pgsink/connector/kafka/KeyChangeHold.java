package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.Operation;
import io.pgsink.core.RowKey;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableId;
import io.pgsink.core.TableSchema;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static java.util.Objects.requireNonNull;

/**
 * The deletes of primary-key changes the task holds back until their creates arrive.
 *
 * <p>Debezium writes a key change as a delete of the old key (header {@code __debezium.newkey})
 * and a create of the new key (header {@code __debezium.oldkey}). With {@code REPLICA IDENTITY
 * DEFAULT} the create carries a placeholder for every unchanged TOASTed column, and those values
 * exist only in the old key's row. If the delete were applied by a flush before the create came
 * (the two may arrive in different {@code put} calls, flushes, or partitions), the create would
 * have nothing to take them from. So the task holds such a delete: it does not buffer it, and
 * nothing after it in its partition is buffered either (its offset is not committed, and the
 * records after it wait), until
 * <ul>
 * <li>its create arrives (in any partition of the task): the two are buffered together as one
 *     update from the old key to the new, which fills the create from the old row in the buffer
 *     or in the target, where it still is;</li>
 * <li>{@code key.change.wait.ms} passes, or a later change of the old key arrives: the delete is
 *     buffered alone (the task says so in a WARN).</li>
 * </ul>
 * The tombstone Debezium writes after the delete is taken into the held delete. Any other record
 * of the held delete's partition is given back to Connect: the task rewinds the partition to it
 * and pauses the partition until the hold ends.
 *
 * <p>A create that arrives before its delete (they travel on the partitions of their keys) is
 * remembered, so that its delete is not held for a create that came already.
 *
 * <p>Owned by the task's thread.
 */
final class KeyChangeHold
{
    private static final int MAX_REMEMBERED_CREATES = 10_000;

    private final long waitNanos;
    private final Map<TopicPartition, Held> byPartition = new HashMap<>();
    private final Map<HeldKey, Held> byKey = new HashMap<>();
    /** Old keys of creates that came with no held delete, oldest first. */
    private final LinkedHashMap<HeldKey, Boolean> creates = new LinkedHashMap<>(16, 0.75f, false)
    {
        @Override
        protected boolean removeEldestEntry(Map.Entry<HeldKey, Boolean> eldest)
        {
            return size() > MAX_REMEMBERED_CREATES;
        }
    };

    /** Per partition, the key of the last key-change delete buffered, whose tombstone may follow. */
    private final Map<TopicPartition, Object> lastDeleteKeys = new HashMap<>();

    KeyChangeHold(long waitMillis)
    {
        this.waitNanos = waitMillis * 1_000_000;
    }

    /** The delete held in {@code partition}, whose partition waits; null when none is. */
    @Nullable
    Held heldIn(TopicPartition partition)
    {
        return byPartition.get(partition);
    }

    boolean isEmpty()
    {
        return byPartition.isEmpty();
    }

    int size()
    {
        return byPartition.size();
    }

    List<Held> held()
    {
        return List.copyOf(byPartition.values());
    }

    /**
     * Whether a record of a partition with a held delete may be taken before the hold ends: the
     * delete's tombstone, or a create of a key change (possibly the held delete's). Anything else
     * comes again after the hold (the partition is rewound to it).
     */
    static boolean mayTake(Held held, SinkRecord record)
    {
        return isTombstoneOf(held, record) || KeyChangeHeaders.oldKey(record) != null;
    }

    /** Debezium's tombstone after the held delete. */
    static boolean isTombstoneOf(Held held, SinkRecord record)
    {
        return record.value() == null && KeyChangeHeaders.isDeleteHalf(record) && Objects.equals(record.key(), held.record.key());
    }

    /** Whether {@code record} of {@code partition}, mapped to {@code delete}, is the delete half of a key change to hold. */
    boolean holds(TopicPartition partition, SinkRecord record, ChangeEvent delete)
    {
        if (waitNanos == 0 || delete.operation() != Operation.DELETE || !KeyChangeHeaders.isDeleteHalf(record) || !delete.schema().hasKey()) {
            return false;
        }
        if (record.value() == null && record.valueSchema() == null && Objects.equals(lastDeleteKeys.remove(partition), record.key())) {
            // the tombstone after a delete that is buffered already (delete.on.tombstone=true)
            return false;
        }
        if (creates.remove(HeldKey.of(delete.schema(), delete.table(), delete.before())) != null) {
            // its create came first (from another partition): nothing to wait for
            lastDeleteKeys.put(partition, record.key());
            return false;
        }
        return true;
    }

    Held hold(TopicPartition partition, SinkRecord record, ChangeEvent delete, long nowNanos)
    {
        Held held = new Held(partition, record, delete, HeldKey.of(delete.schema(), delete.table(), delete.before()), nowNanos + waitNanos);
        Held previous = byPartition.put(partition, held);
        if (previous != null) {
            throw new IllegalStateException("A delete is held in " + partition + " already");
        }
        byKey.put(held.key, held);
        return held;
    }

    /** Whether {@code event} is the create of a key change ({@link ChangeEvent#insertMovedFrom}). */
    static boolean isMovedCreate(ChangeEvent event)
    {
        return (event.operation() == Operation.INSERT || event.operation() == Operation.READ) && event.before() != null;
    }

    /** Whether {@code event} is the create that completes {@code held}. */
    static boolean completes(Held held, ChangeEvent event)
    {
        return isMovedCreate(event) && held.key.equals(HeldKey.of(event.schema(), event.table(), requireNonNull(event.before(), "before is null")));
    }

    /** The held delete {@code create} completes; null when none is held (the create is then remembered). */
    @Nullable
    Held pairOf(ChangeEvent create)
    {
        HeldKey oldKey = HeldKey.of(create.schema(), create.table(), requireNonNull(create.before(), "before is null"));
        Held held = byKey.get(oldKey);
        if (held == null && waitNanos > 0) {
            creates.put(oldKey, Boolean.TRUE);
        }
        return held;
    }

    /** The held deletes a change must not overtake: of the key it changes (or of its table, for a truncate). */
    List<Held> overtakenBy(ChangeEvent event)
    {
        if (byKey.isEmpty()) {
            return List.of();
        }
        List<Held> overtaken = new ArrayList<>(1);
        if (event.operation() == Operation.TRUNCATE) {
            for (Held held : byKey.values()) {
                if (held.key.table.equals(event.table())) {
                    overtaken.add(held);
                }
            }
            return overtaken;
        }
        TableSchema schema = event.schema();
        if (!schema.hasKey()) {
            return overtaken;
        }
        for (Object[] row : new Object[][] {event.before(), event.after()}) {
            if (row != null) {
                Held held = byKey.get(HeldKey.of(schema, event.table(), row));
                if (held != null && !overtaken.contains(held)) {
                    overtaken.add(held);
                }
            }
        }
        return overtaken;
    }

    /** The hold ended: the delete is buffered (with its create, or alone). */
    void remove(Held held)
    {
        byPartition.remove(held.partition, held);
        byKey.remove(held.key, held);
        lastDeleteKeys.put(held.partition, held.record.key());
    }

    /** The held deletes whose wait has passed, oldest first. */
    List<Held> expired(long nowNanos)
    {
        List<Held> expired = new ArrayList<>();
        for (Held held : byPartition.values()) {
            if (nowNanos - held.deadlineNanos >= 0) {
                expired.add(held);
            }
        }
        expired.sort((left, right) -> Long.compare(left.deadlineNanos, right.deadlineNanos));
        return expired;
    }

    /** Milliseconds until the first held delete's wait passes; -1 when none is held. */
    long millisToFirstDeadline(long nowNanos)
    {
        long first = Long.MAX_VALUE;
        for (Held held : byPartition.values()) {
            first = Math.min(first, held.deadlineNanos - nowNanos);
        }
        return first == Long.MAX_VALUE ? -1 : Math.max(first / 1_000_000, 0);
    }

    void clear()
    {
        byPartition.clear();
        byKey.clear();
        creates.clear();
        lastDeleteKeys.clear();
    }

    /** A held delete; the tombstone after it moves {@link #last}. */
    static final class Held
    {
        final TopicPartition partition;
        final SinkRecord record;
        final ChangeEvent delete;
        final HeldKey key;
        final long deadlineNanos;
        /** The position of the last record taken into the hold (the delete, or its tombstone). */
        SourcePosition last;
        /** Offset of the record the partition was rewound to (it comes again after the hold); -1 while none was. */
        long rewoundTo = -1;

        private Held(TopicPartition partition, SinkRecord record, ChangeEvent delete, HeldKey key, long deadlineNanos)
        {
            this.partition = requireNonNull(partition, "partition is null");
            this.record = requireNonNull(record, "record is null");
            this.delete = requireNonNull(delete, "delete is null");
            this.key = requireNonNull(key, "key is null");
            this.deadlineNanos = deadlineNanos;
            this.last = delete.position();
        }

        long offset()
        {
            return record.kafkaOffset();
        }

        /** For logs: table, key columns and position, never a value. */
        String describe()
        {
            return "the delete of a primary-key change of " + delete.table() + " (key columns " + delete.schema().keyColumns() + ") at " + delete.position();
        }
    }

    /** A row's key in its target table. */
    record HeldKey(TableId table, RowKey key)
    {
        static HeldKey of(TableSchema schema, TableId table, Object[] row)
        {
            return new HeldKey(table, schema.keyOf(row));
        }
    }
}
