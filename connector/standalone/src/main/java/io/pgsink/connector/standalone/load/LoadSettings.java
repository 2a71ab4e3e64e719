package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.UnaryOperator;

import static java.util.Objects.requireNonNull;

/**
 * What an {@link InitialLoad} needs from the service's configuration.
 *
 * @param sink the sink's configuration (target, routing, schema evolution, tables without a key)
 * @param source opens connections to the source
 * @param slotName the replication slot Debezium streams from
 * @param publicationName the publication Debezium streams
 * @param publicationAutoCreate Debezium's {@code publication.autocreate.mode}: {@code all_tables}, {@code filtered},
 * {@code disabled} or {@code no_tables}
 * @param captured which tables and columns Debezium captures
 * @param routing the target table of a source table
 * @param parallelism how many chunks are copied at once
 * @param chunkBytes the heap bytes of a source table per chunk
 * @param format the COPY format
 * @param progressIntervalMillis how often progress is logged
 * @param slotCreationTimeoutMillis how long the slot's creation may wait for open transactions
 * @param failoverSlot whether the slot is created with {@code FAILOVER} ({@code source.slot.failover}, PostgreSQL 17+)
 */
public record LoadSettings(
        SinkConfig sink,
        SourceConnector source,
        String slotName,
        String publicationName,
        String publicationAutoCreate,
        CaptureFilter captured,
        UnaryOperator<TableId> routing,
        int parallelism,
        long chunkBytes,
        LoadFormat format,
        long progressIntervalMillis,
        long slotCreationTimeoutMillis,
        boolean failoverSlot)
{
    /**
     * The session settings under which a value prints the same on every server, whatever its
     * defaults ({@code DateStyle ISO}, {@code IntervalStyle postgres}, UTC, all float digits, hex
     * bytea): the initial load's text COPY and {@code pgsink verify}'s row texts use them.
     */
    public static final String SESSION_SETTINGS =
            "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; SET TimeZone = 'UTC'; SET extra_float_digits "
            + "= 3; SET bytea_output = 'hex'";

    public LoadSettings
    {
        requireNonNull(sink, "sink is null");
        requireNonNull(source, "source is null");
        requireNonNull(slotName, "slotName is null");
        requireNonNull(publicationName, "publicationName is null");
        requireNonNull(publicationAutoCreate, "publicationAutoCreate is null");
        requireNonNull(captured, "captured is null");
        requireNonNull(routing, "routing is null");
        requireNonNull(format, "format is null");
    }

    /**
     * Opens source connections; a replication connection speaks the replication protocol ({@code
     * replication=database}).
     */
    public interface SourceConnector
    {
        Connection connect(String applicationName, boolean replication)
                throws SQLException;
    }

    /** Which tables and columns Debezium captures. */
    public interface CaptureFilter
    {
        boolean capturesTable(String schema, String table);

        boolean capturesColumn(String schema, String table, String column);

        /**
         * Whether changes of partitions are published as changes of their partitioned root
         * (Debezium's {@code publish.via.partition.root}): then the roots are captured and loaded
         * (their partitions are not); otherwise the partitions are, each as itself.
         */
        default boolean viaPartitionRoot()
        {
            return false;
        }
    }
}
