package io.pgsink.connector.kafka;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.buffer.Sink;
import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The task's side of primary-key changes ({@link KeyChanges}, which pairs the two halves): a
 * partition whose key-change create waits for its old row is held, its records kept in order
 * ({@link WaitingRecords}) and the partition paused when many wait, until the row is found; then
 * the records are handed back to the task, in order. The delete half is buffered at once, after a
 * flush of any change of its old key.
 *
 * <p>Owned by the task's thread.
 */
final class KeyChangeHold
{
    private static final Logger log = LoggerFactory.getLogger(KeyChangeHold.class);

    private final String name;
    private final KeyChanges keyChanges;
    private final SinkTaskContext context;
    /** Whether the task still owns a partition. */
    private final Predicate<TopicPartition> owned;
    private final WaitingRecords waiting = new WaitingRecords();

    KeyChangeHold(String name, KeyChanges keyChanges, SinkTaskContext context, Predicate<TopicPartition> owned)
    {
        this.name = name;
        this.keyChanges = keyChanges;
        this.context = context;
        this.owned = owned;
    }

    /** Whether {@code record} waits behind a create of its partition that waits; if so it is kept. */
    boolean keeps(TopicPartition partition, SinkRecord record)
    {
        if (!waiting.holds(partition)) {
            return false;
        }
        if (waiting.keep(partition, record)) {
            context.pause(partition);
        }
        return true;
    }

    /**
     * Whether {@code event}, read from {@code record}, is the create of a key change that waits for
     * its old row; if so the partition is held from it on.
     */
    boolean holds(TopicPartition partition, SinkRecord record, ChangeEvent event, SourcePosition position)
    {
        if (!KeyChanges.isMovedCreate(event) || !keyChanges.waits(partition, event, position)) {
            return false;
        }
        waiting.start(partition, record);
        log.debug("{} - the create of a primary-key change at offset {} of {} waits for its old row; the records "
                + "after it in the partition wait with it", name, record.kafkaOffset(), partition);
        return true;
    }

    /**
     * Before {@code change} is buffered: the delete of a key change after a flush of any change of
     * its old key, so that the old row its flush saves is the row the source moved.
     */
    void beforeBuffering(SinkRecord record, ChangeEvent change, SourcePosition position, Sink sink)
    {
        if (KeyChanges.isKeyChangeDelete(record, change)) {
            if (keyChanges.flushesBefore(change)) {
                sink.flush();
            }
            keyChanges.deleted(change, position);
        }
        keyChanges.touch(change);
    }

    /**
     * Hands {@code take} the records of the partitions whose waiting creates found their old rows
     * (or waited long enough), in order; a failure keeps those not taken for the next attempt.
     */
    void release(Consumer<SinkRecord> take)
    {
        for (TopicPartition partition : keyChanges.released()) {
            List<SinkRecord> records = waiting.take(partition);
            resumeIfPaused(partition);
            for (int i = 0; i < records.size(); i++) {
                try {
                    take.accept(records.get(i));
                }
                catch (RuntimeException e) {
                    waiting.restore(partition, records.subList(i, records.size()));
                    throw e;
                }
            }
        }
    }

    /**
     * After a {@code put}: flushes when the buffer holds deletes of key changes, whose creates, in
     * other partitions and tasks, may wait for the old rows the flush saves.
     */
    void afterPut(Sink sink)
    {
        if (keyChanges.deletesBuffered()) {
            sink.flush();
        }
        keyChanges.prune();
    }

    void closed(Collection<TopicPartition> closed)
    {
        keyChanges.closed(closed);
        waiting.drop(closed);
    }

    /**
     * Forgets every record kept and every key change buffered (the buffer was dropped); returns, per
     * partition still owned, the offset of its first record kept, to be read again.
     */
    Map<TopicPartition, Long> discard()
    {
        List<TopicPartition> held = waiting.partitions();
        Map<TopicPartition, Long> firstKept = waiting.drop(held);
        held.forEach(this::resumeIfPaused);
        firstKept.keySet().removeIf(owned.negate());
        keyChanges.clear();
        return firstKept;
    }

    private void resumeIfPaused(TopicPartition partition)
    {
        if (waiting.wasPaused(partition) && owned.test(partition)) {
            context.resume(partition);
        }
    }

    int waitingCount()
    {
        return keyChanges.waitingCount();
    }

    /** Milliseconds until the waiting creates are to be looked at again; negative when none waits. */
    long millisToNextLook()
    {
        return keyChanges.millisToNextLook();
    }

    void handedOff()
    {
        keyChanges.handedOff();
    }

    void committed(Map<String, SourcePosition> positions)
    {
        keyChanges.committed(positions);
    }

    void close()
    {
        keyChanges.clear();
        keyChanges.close();
    }
}
