package io.pgsink.connector.kafka;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The records of partitions whose key-change create waits for its old row ({@link KeyChanges}):
 * the create and the records after it, kept in order, not taken, until the row is found. Kept in
 * memory rather than given back to Connect, since a rewind drops what the consumer fetched and
 * the fetch after it waits for the partitions that have nothing ({@code fetch.max.wait.ms}); the
 * partition is paused only when {@value #PAUSE_AT} records wait. Owned by the task's thread.
 */
final class WaitingRecords
{
    static final int PAUSE_AT = 1000;

    private final Map<TopicPartition, ArrayDeque<SinkRecord>> queues = new HashMap<>();
    private final Set<TopicPartition> paused = new HashSet<>();

    boolean holds(TopicPartition partition)
    {
        return queues.containsKey(partition);
    }

    /** The create at the head of {@code partition}'s records waits. */
    void start(TopicPartition partition, SinkRecord create)
    {
        ArrayDeque<SinkRecord> queue = new ArrayDeque<>();
        queue.add(create);
        queues.put(partition, queue);
    }

    /**
     * Keeps a record of a partition whose create waits (one handed again after a retriable failure
     * is kept once); returns whether the partition is to be paused now.
     */
    boolean keep(TopicPartition partition, SinkRecord record)
    {
        ArrayDeque<SinkRecord> queue = queues.get(partition);
        if (record.kafkaOffset() <= queue.getLast().kafkaOffset()) {
            return false;
        }
        queue.add(record);
        return queue.size() >= PAUSE_AT && paused.add(partition);
    }

    /** The records of {@code partition}, in order, to be taken again; {@link #wasPaused} tells whether to resume it. */
    List<SinkRecord> take(TopicPartition partition)
    {
        ArrayDeque<SinkRecord> queue = queues.remove(partition);
        return queue == null ? List.of() : new ArrayList<>(queue);
    }

    /** Puts back {@code records} (a failure stopped taking them), before any kept since. */
    void restore(TopicPartition partition, List<SinkRecord> records)
    {
        ArrayDeque<SinkRecord> queue = new ArrayDeque<>(records);
        ArrayDeque<SinkRecord> since = queues.get(partition);
        if (since != null) {
            for (SinkRecord record : since) {
                if (record.kafkaOffset() > queue.getLast().kafkaOffset()) {
                    queue.add(record);
                }
            }
        }
        queues.put(partition, queue);
    }

    /** Whether {@code partition} was paused (and is no longer counted so). */
    boolean wasPaused(TopicPartition partition)
    {
        return paused.remove(partition);
    }

    /** Forgets the records of {@code partitions}; returns, per partition, the offset of its first record. */
    Map<TopicPartition, Long> drop(Collection<TopicPartition> partitions)
    {
        Map<TopicPartition, Long> first = new HashMap<>();
        for (TopicPartition partition : partitions) {
            ArrayDeque<SinkRecord> queue = queues.remove(partition);
            if (queue != null) {
                first.put(partition, queue.getFirst().kafkaOffset());
            }
        }
        return first;
    }

    List<TopicPartition> partitions()
    {
        return List.copyOf(queues.keySet());
    }

    int size()
    {
        return queues.size();
    }
}
