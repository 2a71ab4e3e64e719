package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.MovedRows.Move;
import io.pgsink.merge.state.MovedRows;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * Primary-key changes, whatever partitions and tasks their two halves reach. Debezium writes a key
 * change as a delete of the old key (header {@code __debezium.newkey}) and a create of the new key
 * (header {@code __debezium.oldkey}); with {@code REPLICA IDENTITY DEFAULT} the create carries a
 * placeholder for every unchanged TOASTed column, whose value is the old row's. The record key is
 * the primary key, so the two usually travel on different partitions, often to different tasks.
 * <ul>
 * <li>The delete is buffered at once, like any delete: no partition ever waits for it. The
 *     {@code put} that took it flushes (its create may wait for it elsewhere); the flush saves the
 *     old row, as the target holds it, in {@link MovedRows} before deleting it, in the same
 *     transaction ({@link #saved}). So that the target row is the one the source moved, the
 *     buffer is flushed first when it holds a change of the old key ({@link #flushesBefore}).</li>
 * <li>A create without placeholders is buffered at once.</li>
 * <li>A create with placeholders whose delete is in the task's buffer is buffered with it: the
 *     flush fills it from the old row before deleting that ({@link ChangeEvent#insertMovedFrom}).</li>
 * <li>Any other create with placeholders takes the values from the saved old row, and its flush
 *     deletes that ({@link #taken}). Until the delete's flush saved it (the other partition is
 *     behind), the create's partition waits, alone: the create and the records after it are kept
 *     in memory ({@link WaitingRecords}), and each {@code put} looks again (every 50 ms). After
 *     {@code key.change.wait.ms} it is buffered as it is, to be filled from the old key's target
 *     row if there is one (a create replayed after its old row was taken).</li>
 * </ul>
 * History tables ({@code table.mode=history}) keep no current row to save: their creates are
 * buffered at once, filled from the buffer as before.
 * A crash loses nothing: a saved row is deleted only by the flush that applies its create, and
 * positions are stored with the data.
 *
 * <p>Owned by the task's thread, except {@link #saved} and {@link #taken}, which a pipelined
 * flush calls from its applier thread.
 */
final class KeyChanges
        implements MovedRows.Moves, AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(KeyChanges.class);
    /** How often waiting creates look for their saved rows. */
    private static final long LOOK_EVERY_NANOS = 50_000_000L;

    private final String name;
    private final SavedRows savedRows;
    private final Predicate<TableId> history;
    private final long waitNanos;
    private long lastLookNanos;

    /** Key-change deletes taken and not yet committed. */
    private final List<Pending> deletes = new CopyOnWriteArrayList<>();
    /** Saved rows creates took, not yet committed. */
    private final List<Pending> takes = new CopyOnWriteArrayList<>();
    /** The deletes in the buffer (not handed off), by table and old key ({@link #keyOf}). */
    private final Map<Move, Pending> buffered = new HashMap<>();
    /** Keys the buffer holds changes of (not handed off): a key-change delete of one flushes first. */
    private final Set<Move> touched = new HashSet<>();
    /** Creates waiting for their saved rows, by partition. */
    private final Map<TopicPartition, Waiting> waiting = new HashMap<>();

    KeyChanges(String name, MovedRows rows, TargetConnector connector, Supplier<Dialect> dialect,
            Predicate<TableId> history, long waitMillis)
    {
        this.history = requireNonNull(history, "history is null");
        this.name = requireNonNull(name, "name is null");
        this.waitNanos = waitMillis * 1_000_000;
        // saved rows are needed while a create may still come; far longer than anyone waits for one
        this.savedRows = new SavedRows(name, rows, connector, dialect, Math.max(3600, 10 * waitMillis / 1000));
        this.lastLookNanos = System.nanoTime() - LOOK_EVERY_NANOS;
    }

    /** Whether {@code event}, read from {@code record}, is the delete of a key change. */
    static boolean isKeyChangeDelete(SinkRecord record, ChangeEvent event)
    {
        return event.operation() == Operation.DELETE && record.value() != null
                && KeyChangeHeaders.isDeleteHalf(record) && event.schema().hasKey();
    }

    /** Whether {@code event} is the create of a key change ({@link ChangeEvent#insertMovedFrom}). */
    static boolean isMovedCreate(ChangeEvent event)
    {
        return (event.operation() == Operation.INSERT || event.operation() == Operation.READ)
                && event.before() != null && event.schema().hasKey();
    }

    /**
     * Whether the buffer must be flushed before {@code delete} (a key-change delete) is buffered: it holds a change of
     * the old key.
     */
    boolean flushesBefore(ChangeEvent delete)
    {
        return touched.contains(keyOf(moveOf(delete)));
    }

    /** A key-change delete is buffered at {@code position}. */
    void deleted(ChangeEvent delete, SourcePosition position)
    {
        if (history.test(delete.table())) {
            // a history table has no current row to save: its creates are filled from the buffer, or fail
            return;
        }
        savedRows.ensureTable();
        Pending pending = new Pending(moveOf(delete), position.partition(), KafkaPositions.parseOffset(position));
        deletes.add(pending);
        buffered.put(keyOf(pending.move), pending);
    }

    /** Any event is buffered: its keys are touched. */
    void touch(ChangeEvent event)
    {
        if (event.operation() == Operation.TRUNCATE || !event.schema().hasKey()) {
            return;
        }
        TableSchema schema = event.schema();
        for (Object[] row : new Object[][] {event.before(), event.after()}) {
            if (row != null) {
                touched.add(new Move(event.table(), schema.keyOf(row), 0));
            }
        }
    }

    /**
     * Decides about the create of a key change at {@code position} of {@code partition}, before it
     * is taken: returns whether it waits (the caller keeps it and the records after it, see
     * {@link #released}). Otherwise it is to be buffered: filled from its saved row when one was found.
     */
    boolean waits(TopicPartition partition, ChangeEvent create, SourcePosition position)
    {
        if (history.test(create.table())) {
            return false;
        }
        Move move = moveOf(create);
        Pending delete = buffered.get(keyOf(move));
        if (delete != null) {
            // the delete is in this buffer: the flush fills the create from the old row before deleting it
            delete.paired = true;
            return false;
        }
        long offset = KafkaPositions.parseOffset(position);
        if (!hasUnavailable(requireNonNull(create.after(), "after is null"))) {
            // nothing to fill: the saved row, if there is one, is not needed
            takes.add(new Pending(move, position.partition(), offset));
            return false;
        }
        Waiting waited = waiting.get(partition);
        if (waited != null && waited.offset == offset && waited.expired) {
            waiting.remove(partition);
            log.warn("{} - the create of a primary-key change of {} (key columns {}) at {} found no old row saved "
                    + "within {}={} ms; applying it filled from the old key's row in the target,"
                    + " if there is one", name, create.table(), create.schema().keyColumns(), position,
                    KafkaSinkConfig.KEY_CHANGE_WAIT_MS, waitNanos / 1_000_000);
            return false;
        }
        MovedRows.SavedRow saved = savedRows.find(List.of(move)).get(move);
        if (saved == null) {
            if (waited == null || waited.offset != offset) {
                waiting.put(partition, new Waiting(move, offset, System.nanoTime()));
            }
            else {
                waited.released = false;
            }
            return true;
        }
        waiting.remove(partition);
        fill(create, saved);
        takes.add(new Pending(saved.move(), position.partition(), offset));
        return false;
    }

    /**
     * Looks for the saved rows of the waiting creates: returns the partitions whose creates are to
     * be taken again, those whose row was found or whose wait passed.
     */
    List<TopicPartition> released()
    {
        List<TopicPartition> released = new ArrayList<>();
        if (waiting.isEmpty()) {
            return released;
        }
        long now = System.nanoTime();
        List<Move> looking = new ArrayList<>();
        for (Waiting waited : waiting.values()) {
            if (!waited.released) {
                looking.add(waited.move);
            }
        }
        if (looking.isEmpty() || now - lastLookNanos < LOOK_EVERY_NANOS) {
            return released;
        }
        lastLookNanos = now;
        Map<Move, MovedRows.SavedRow> found = savedRows.find(looking);
        for (Map.Entry<TopicPartition, Waiting> entry : waiting.entrySet()) {
            Waiting waited = entry.getValue();
            if (waited.released) {
                continue;
            }
            if (found.containsKey(waited.move) || now - waited.sinceNanos >= waitNanos) {
                waited.released = true;
                waited.expired = !found.containsKey(waited.move);
                released.add(entry.getKey());
            }
        }
        return released;
    }

    int waitingCount()
    {
        return waiting.size();
    }

    /** Milliseconds until waiting creates look again; -1 when none waits. */
    long millisToNextLook()
    {
        for (Waiting waited : waiting.values()) {
            if (!waited.released) {
                return Math.max(1, (LOOK_EVERY_NANOS - (System.nanoTime() - lastLookNanos)) / 1_000_000);
            }
        }
        return -1;
    }

    /** Whether the buffer holds deletes of key changes whose old rows are to be saved (their creates are not in it). */
    boolean deletesBuffered()
    {
        for (Pending pending : buffered.values()) {
            if (!pending.paired) {
                return true;
            }
        }
        return false;
    }

    /** The buffer was handed to the applier: what it holds is no longer this buffer's. */
    void handedOff()
    {
        buffered.clear();
        touched.clear();
    }

    /** A batch committed {@code positions}: its deletes and takes are done. */
    void committed(Map<String, SourcePosition> positions)
    {
        deletes.removeIf(pending -> pending.in(positions));
        takes.removeIf(pending -> pending.in(positions));
    }

    /** The buffer was dropped (its records are read again), or partitions were closed. */
    void clear()
    {
        deletes.clear();
        takes.clear();
        buffered.clear();
        touched.clear();
        waiting.clear();
    }

    /** Forgets the waiting creates of {@code closed}. */
    void closed(Iterable<TopicPartition> closed)
    {
        for (TopicPartition partition : closed) {
            waiting.remove(partition);
        }
    }

    @Override
    public List<Move> saved(Batch batch)
    {
        List<Move> saved = new ArrayList<>();
        for (Pending pending : deletes) {
            if (!pending.paired && pending.in(batch.positions())) {
                saved.add(pending.move);
            }
        }
        return saved;
    }

    @Override
    public List<Move> taken(Batch batch)
    {
        List<Move> taken = new ArrayList<>();
        for (Pending pending : takes) {
            if (pending.in(batch.positions())) {
                taken.add(pending.move);
            }
        }
        return taken;
    }

    /** Deletes saved rows no create took, now and then. */
    void prune()
    {
        savedRows.prune();
    }

    @Override
    public void close()
    {
        savedRows.close();
    }

    /** Fills the create's placeholders from the saved row, by column name; what the row lacks stays a placeholder. */
    private static void fill(ChangeEvent create, MovedRows.SavedRow saved)
    {
        Object[] after = requireNonNull(create.after(), "after is null");
        TableSchema schema = create.schema();
        for (int i = 0; i < after.length; i++) {
            if (after[i] == UnavailableValue.INSTANCE) {
                int index = saved.columns().indexOf(schema.columns().get(i).name());
                if (index >= 0) {
                    after[i] = saved.values().get(index);
                }
            }
        }
    }

    private static boolean hasUnavailable(Object[] row)
    {
        for (Object value : row) {
            if (value == UnavailableValue.INSTANCE) {
                return true;
            }
        }
        return false;
    }

    /**
     * The key change of its delete or its create: both name the old key (a create in {@link ChangeEvent#before()}) and
     * the source commit time.
     */
    private static Move moveOf(ChangeEvent event)
    {
        return new Move(event.table(), event.schema().keyOf(requireNonNull(event.before(), "before is null")),
                event.sourceTimeMillis());
    }

    /** A key as {@link #touched} and {@link #buffered} name it: table and key, whatever the time. */
    private static Move keyOf(Move move)
    {
        return new Move(move.table(), move.oldKey(), 0);
    }

    /** A key-change delete, or a take of a saved row, by the position of its record. */
    private static final class Pending
    {
        final Move move;
        final String partition;
        final long offset;
        /** Its create is in the same buffer, which fills it from the old row: nothing to save. */
        volatile boolean paired;

        Pending(Move move, String partition, long offset)
        {
            this.move = move;
            this.partition = partition;
            this.offset = offset;
        }

        boolean in(Map<String, SourcePosition> positions)
        {
            SourcePosition position = positions.get(partition);
            return position != null && KafkaPositions.parseOffset(position) >= offset;
        }
    }

    /** A create waiting for its saved row; {@code released}: its partition resumed, the create comes again. */
    private static final class Waiting
    {
        final Move move;
        final long offset;
        final long sinceNanos;
        boolean released;
        boolean expired;

        Waiting(Move move, long offset, long sinceNanos)
        {
            this.move = move;
            this.offset = offset;
            this.sinceNanos = sinceNanos;
        }
    }
}
