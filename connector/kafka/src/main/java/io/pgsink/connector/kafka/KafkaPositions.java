package io.pgsink.connector.kafka;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.common.TopicPartition;

import java.util.Optional;

/**
 * How the Kafka Connect sink writes its positions into the offsets table: the source partition is
 * {@code <topic>-<partition>} (Kafka's own spelling of a topic partition; the partition number
 * follows the last '-', so topics containing '-' and '.' read back unambiguously), the offset is
 * the Kafka offset of the last record applied. The next record to consume is that offset + 1,
 * which is what the task rewinds the consumer to and what it commits to Kafka.
 */
final class KafkaPositions
{
    private KafkaPositions() {}

    static String partition(TopicPartition partition)
    {
        return partition.topic() + "-" + partition.partition();
    }

    static SourcePosition position(String partition, long offset)
    {
        return new SourcePosition(partition, Long.toString(offset));
    }

    /** The topic partition a stored partition names, or empty when it is not one (another kind of sink wrote it). */
    static Optional<TopicPartition> parsePartition(String partition)
    {
        int dash = partition.lastIndexOf('-');
        if (dash <= 0 || dash == partition.length() - 1) {
            return Optional.empty();
        }
        String number = partition.substring(dash + 1);
        for (int i = 0; i < number.length(); i++) {
            if (number.charAt(i) < '0' || number.charAt(i) > '9') {
                return Optional.empty();
            }
        }
        try {
            return Optional.of(new TopicPartition(partition.substring(0, dash), Integer.parseInt(number)));
        }
        catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * The Kafka offset of a stored position.
     *
     * @throws NumberFormatException when it is not one
     */
    static long parseOffset(SourcePosition position)
    {
        long offset = Long.parseLong(position.offset());
        if (offset < 0) {
            throw new NumberFormatException("negative offset " + offset);
        }
        return offset;
    }
}
