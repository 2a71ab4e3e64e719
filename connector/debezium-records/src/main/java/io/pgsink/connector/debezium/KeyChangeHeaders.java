package io.pgsink.connector.debezium;

import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.Header;
import org.jetbrains.annotations.Nullable;

/**
 * The headers by which Debezium marks the two records of an update that changes a primary key: a
 * delete of the old key carrying {@code __debezium.newkey}, then a create of the new key carrying
 * {@code __debezium.oldkey}. Both come from one WAL record, so they share one source position.
 */
public final class KeyChangeHeaders
{
    /** On the delete half of a key change: the new key. */
    public static final String NEW_KEY = "__debezium.newkey";
    /** On the create half of a key change: the old key. */
    public static final String OLD_KEY = "__debezium.oldkey";

    private KeyChangeHeaders() {}

    /** Whether {@code record} is the delete half of a key change (or the tombstone that follows it). */
    public static boolean isDeleteHalf(ConnectRecord<?> record)
    {
        return header(record, NEW_KEY) != null;
    }

    /** On the create half of a key change, the old key; null on any other record. */
    @Nullable
    public static Struct oldKey(ConnectRecord<?> record)
    {
        Header header = header(record, OLD_KEY);
        return header != null && header.value() instanceof Struct key ? key : null;
    }

    @Nullable
    private static Header header(ConnectRecord<?> record, String name)
    {
        return record.headers() == null ? null : record.headers().lastWithName(name);
    }
}
