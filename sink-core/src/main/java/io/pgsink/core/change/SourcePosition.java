package io.pgsink.core.change;

import org.jetbrains.annotations.Nullable;

import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * Where in the source stream an event came from, in a form the adapter can resume from.
 * A source has one or more partitions (Debezium: the source partition map; Kafka: topic and
 * partition); for each, pgsink stores the position of the last applied event in the target, in the
 * same transaction as the data. Both parts are opaque strings serialized by the adapter.
 *
 * <p>An adapter may defer the offset's text ({@link #deferred}): of the positions of a batch's
 * events only the last one per partition is stored, so the others need never be written out.
 * Equal positions have equal partitions and offsets, deferred or not.
 *
 * <p>Immutable; a deferred offset is written at most a few times (by whichever thread asks first), so
 * its supplier must give the same text each time and may be called from any thread.
 */
public final class SourcePosition
{
    /** What a deferred offset's text takes on the heap when the estimate must not write it. */
    public static final int DEFERRED_OFFSET_ESTIMATE = 128;

    private final String partition;
    @Nullable
    private final Supplier<String> deferredOffset;
    /** The offset's text; null until a deferred one is first asked for. */
    @Nullable
    private volatile String offset;

    /**
     * @param partition identifies the partition, e.g. {@code {"server":"db1"}} or {@code orders-3}
     * @param offset the position within the partition, e.g. {@code {"lsn":123}} or {@code 4711}
     */
    public SourcePosition(String partition, String offset)
    {
        this.partition = requireNonNull(partition, "partition is null");
        this.offset = requireNonNull(offset, "offset is null");
        this.deferredOffset = null;
    }

    private SourcePosition(String partition, Supplier<String> deferredOffset)
    {
        this.partition = requireNonNull(partition, "partition is null");
        this.deferredOffset = requireNonNull(deferredOffset, "deferredOffset is null");
    }

    /** A position whose offset text {@code offset} writes when it is first asked for. */
    public static SourcePosition deferred(String partition, Supplier<String> offset)
    {
        return new SourcePosition(partition, offset);
    }

    public String partition()
    {
        return partition;
    }

    public String offset()
    {
        String text = offset;
        if (text == null) {
            text = requireNonNull(requireNonNull(deferredOffset, "deferredOffset is null").get(), "offset is null");
            offset = text;
        }
        return text;
    }

    /** The length of the offset's text, estimated without writing a deferred one that was not written yet. */
    public int offsetLengthEstimate()
    {
        String text = offset;
        return text != null ? text.length() : DEFERRED_OFFSET_ESTIMATE;
    }

    @Override
    public boolean equals(Object other)
    {
        return other == this || other instanceof SourcePosition position && partition.equals(position.partition)
                && offset().equals(position.offset());
    }

    @Override
    public int hashCode()
    {
        return 31 * partition.hashCode() + offset().hashCode();
    }

    /** {@code offset 4711 of orders-3}: how errors and logs name a position. */
    @Override
    public String toString()
    {
        return "offset " + offset() + " of " + partition;
    }
}
