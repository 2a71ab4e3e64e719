package io.pgsink.core.change;

import static java.util.Objects.requireNonNull;

/**
 * Where in the source stream an event came from, in a form the adapter can resume from.
 * A source has one or more partitions (Debezium: the source partition map; Kafka: topic and
 * partition); for each, pgsink stores the position of the last applied event in the target, in the
 * same transaction as the data. Both parts are opaque strings serialized by the adapter.
 *
 * @param partition identifies the partition, e.g. {@code {"server":"db1"}} or {@code orders-3}
 * @param offset the position within the partition, e.g. {@code {"lsn":123}} or {@code 4711}
 */
public record SourcePosition(String partition, String offset)
{
    public SourcePosition
    {
        requireNonNull(partition, "partition is null");
        requireNonNull(offset, "offset is null");
    }

    /** {@code offset 4711 of orders-3}: how errors and logs name a position. */
    @Override
    public String toString()
    {
        return "offset " + offset + " of " + partition;
    }
}
