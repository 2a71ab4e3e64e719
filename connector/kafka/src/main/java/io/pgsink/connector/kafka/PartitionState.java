package io.pgsink.connector.kafka;

import org.apache.kafka.common.TopicPartition;

/**
 * What a task knows of one partition it owns: where the target's data ends, which records it
 * buffered, and whether it claimed the partition's writer generation. Owned by the task's thread.
 */
final class PartitionState
{
    final TopicPartition partition;
    /** The partition as positions name it ({@link KafkaPositions#partition}), also its writer fence. */
    final String name;
    /** Offset of the last record whose data is committed in the target; -1 while unknown. */
    long committed = -1;
    /** Records below this offset are buffered or applied already; -1 takes every record. */
    long next = -1;
    /** Offset of the first record taken since the last flush; -1 when none is. */
    long firstUnflushed = -1;
    /** Whether the task claimed the partition's writer generation (see {@code MergeApplier.claim}). */
    boolean claimed;

    PartitionState(TopicPartition partition)
    {
        this.partition = partition;
        this.name = KafkaPositions.partition(partition);
    }
}
