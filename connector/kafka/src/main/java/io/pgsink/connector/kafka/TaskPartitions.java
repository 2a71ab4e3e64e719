package io.pgsink.connector.kafka;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.MergeApplier;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * The task's position bookkeeping: the partitions it owns ({@link PartitionState}), their writer
 * claims, the positions stored for them, the offsets safe to commit to Kafka, and the rewinds
 * when a buffer is dropped. Owned by the task's thread.
 */
final class TaskPartitions
{
    private static final Logger log = LoggerFactory.getLogger(TaskPartitions.class);

    private final String name;
    private final MergeApplier applier;
    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final Map<String, PartitionState> byName = new HashMap<>();
    /** Opened, but their positions could not be read yet: their records wait, paused. */
    private final Set<TopicPartition> unpositioned = new LinkedHashSet<>();

    TaskPartitions(String name, MergeApplier applier)
    {
        this.name = requireNonNull(name, "name is null");
        this.applier = requireNonNull(applier, "applier is null");
    }

    @Nullable
    PartitionState get(TopicPartition partition)
    {
        return partitions.get(partition);
    }

    /** The partition a position names, when the task owns it. */
    @Nullable
    TopicPartition named(String partition)
    {
        PartitionState state = byName.get(partition);
        return state == null ? null : state.partition;
    }

    void add(Collection<TopicPartition> opened)
    {
        for (TopicPartition partition : opened) {
            PartitionState state = new PartitionState(partition);
            partitions.put(partition, state);
            byName.put(state.name, state);
        }
    }

    /** Records of {@code opened} wait until {@link #loadWaiting} reads their positions. */
    void waitForPositions(Collection<TopicPartition> opened)
    {
        unpositioned.addAll(opened);
    }

    /**
     * Loads the positions of the partitions waiting for them; returns those partitions (to resume), empty when none
     * waited.
     */
    List<TopicPartition> loadWaiting(Map<TopicPartition, Long> rewind)
    {
        if (unpositioned.isEmpty()) {
            return List.of();
        }
        List<TopicPartition> waiting = List.copyOf(unpositioned);
        load(waiting, rewind);
        unpositioned.clear();
        return waiting;
    }

    /**
     * Claims the writer generation of each of {@code opened} (a task that owned one before can no
     * longer commit a batch of it), reads their stored positions and adds to {@code rewind} the
     * record after each.
     */
    void load(Collection<TopicPartition> opened, Map<TopicPartition, Long> rewind)
    {
        for (TopicPartition partition : opened) {
            PartitionState state = partitions.get(partition);
            if (state != null && !state.claimed) {
                applier.claim(state.name);
                state.claimed = true;
            }
        }
        Map<String, SourcePosition> stored = applier.committedPositions();
        List<String> described = new ArrayList<>();
        for (TopicPartition partition : opened) {
            PartitionState state = partitions.get(partition);
            if (state == null) {
                continue;
            }
            SourcePosition position = stored.get(state.name);
            if (position == null) {
                described.add(state.name + " (no stored position: from Kafka's committed offset)");
                continue;
            }
            long offset;
            try {
                offset = KafkaPositions.parseOffset(position);
            }
            catch (NumberFormatException e) {
                throw new SinkException(ErrorCode.CONFIG, "The offsets table holds position '" + position.offset()
                        + "' for " + state.name + " of sink '" + name
                        + "', which is not a Kafka offset: is sink.name " + name + " also used by another sink?");
            }
            state.committed = offset;
            state.next = offset + 1;
            rewind.put(partition, offset + 1);
            described.add(state.name + " at offset " + (offset + 1));
        }
        log.info("{} - opened {}", name, String.join(", ", described));
    }

    /**
     * For the partitions Connect asks about, the offset after the last record whose data is committed in the target.
     */
    Map<TopicPartition, OffsetAndMetadata> committedOffsets(Collection<TopicPartition> asked)
    {
        Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
        for (TopicPartition partition : asked) {
            PartitionState state = partitions.get(partition);
            if (state != null && state.committed >= 0) {
                committed.put(partition, new OffsetAndMetadata(state.committed + 1));
            }
        }
        return committed;
    }

    /**
     * A flush committed {@code positions}. {@code everything}: nothing taken is buffered or being
     * applied any more. Otherwise (flush.pipelined: records were taken while the batch applied) a
     * partition's first record not committed is the one after its committed position, when the
     * task took records after it.
     */
    void flushed(Collection<SourcePosition> positions, boolean everything)
    {
        for (SourcePosition position : positions) {
            PartitionState state = byName.get(position.partition());
            if (state != null) {
                state.committed = KafkaPositions.parseOffset(position);
            }
        }
        for (PartitionState state : partitions.values()) {
            if (everything) {
                state.firstUnflushed = -1;
            }
            else if (state.firstUnflushed >= 0 && state.committed >= state.firstUnflushed) {
                state.firstUnflushed = state.next > state.committed + 1 ? state.committed + 1 : -1;
            }
        }
    }

    /** Whether opened partitions wait for their positions to be read ({@link #loadWaiting}). */
    boolean waiting()
    {
        return !unpositioned.isEmpty();
    }

    /**
     * A record of {@code partition} at {@code offset} is held back by the task: the partition has records not flushed.
     */
    void unflushed(TopicPartition partition, long offset)
    {
        PartitionState state = partitions.get(partition);
        if (state != null && (state.firstUnflushed < 0 || offset < state.firstUnflushed)) {
            state.firstUnflushed = offset;
        }
    }

    /** Forgets {@code closed} and gives up their writer claims; returns whether any had records not flushed. */
    boolean remove(Collection<TopicPartition> closed)
    {
        boolean unflushed = false;
        for (TopicPartition partition : closed) {
            PartitionState state = partitions.remove(partition);
            if (state != null) {
                byName.remove(state.name);
                unflushed |= state.firstUnflushed >= 0;
                applier.release(state.name);
            }
            unpositioned.remove(partition);
        }
        return unflushed;
    }

    /** The buffer was dropped: where each partition with records in it is to be read again from. */
    Map<TopicPartition, Long> rewindUnflushed()
    {
        Map<TopicPartition, Long> rewind = new HashMap<>();
        for (PartitionState state : partitions.values()) {
            if (state.firstUnflushed >= 0) {
                long offset = state.committed >= 0 ? state.committed + 1 : state.firstUnflushed;
                rewind.put(state.partition, offset);
                state.next = offset;
                state.firstUnflushed = -1;
            }
        }
        return rewind;
    }

    void clear()
    {
        partitions.clear();
        byName.clear();
        unpositioned.clear();
    }
}
