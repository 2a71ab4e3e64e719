package io.pgsink.connector.standalone.load;

import io.pgsink.copy.sql.SqlIdentifiers;
import org.postgresql.PGConnection;
import org.postgresql.replication.ReplicationSlotInfo;
import org.postgresql.replication.fluent.logical.ChainedLogicalCreateSlotBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.sql.Statement;

import static java.util.Objects.requireNonNull;

/**
 * A logical replication slot created with an exported snapshot: the snapshot shows exactly the
 * transactions that committed before the slot's consistent point, and the slot streams exactly
 * those that commit after it. The snapshot lives while the replication connection that created the
 * slot stays open and idle, so this object holds that connection until {@link #close()}; readers
 * import the snapshot with {@code SET TRANSACTION SNAPSHOT} meanwhile.
 *
 * <p>The permanent slot is the one Debezium streams from afterwards; a temporary slot (dropped by
 * the server when its connection closes) only exports a fresh snapshot, for tables reloaded after
 * a crash (see {@link InitialLoad}).
 */
final class ExportedSnapshot
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(ExportedSnapshot.class);

    private final Connection replication;
    private final String name;
    private final String lsn;

    private ExportedSnapshot(Connection replication, String name, String lsn)
    {
        this.replication = requireNonNull(replication, "replication is null");
        this.name = requireNonNull(name, "name is null");
        this.lsn = requireNonNull(lsn, "lsn is null");
    }

    /**
     * Creates slot {@code slotName} on the replication connection {@code replication}, which this
     * object owns from now on (closed on failure too). PostgreSQL creates a logical slot once every
     * transaction holding a transaction id when it starts has ended; after {@code timeoutMillis} the
     * creation is cancelled and {@link SlotCreationTimedOutException} thrown. With {@code failover}
     * the slot is created with {@code FAILOVER} (PostgreSQL 17+), so that a standby with
     * {@code sync_replication_slots=on} keeps a copy of it.
     */
    static ExportedSnapshot create(Connection replication, String slotName, boolean temporary, boolean failover,
            long timeoutMillis)
            throws SQLException
    {
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(timeoutMillis);
                timedOut.set(true);
                replication.unwrap(PGConnection.class).cancelQuery();
            }
            catch (InterruptedException e) {
                // created (or failed) in time
            }
            catch (SQLException e) {
                log.warn("cannot cancel the creation of replication slot {}: {}", slotName, e.getMessage());
            }
        }, "pgsink-slot-creation-timeout");
        watchdog.setDaemon(true);
        watchdog.start();
        try {
            if (failover) {
                return createFailover(replication, slotName, temporary);
            }
            ChainedLogicalCreateSlotBuilder builder =
                    replication.unwrap(PGConnection.class).getReplicationAPI().createReplicationSlot().logical()
                    .withSlotName(slotName)
                    .withOutputPlugin("pgoutput");
            if (temporary) {
                builder = builder.withTemporaryOption();
            }
            ReplicationSlotInfo slot = builder.make();
            if (slot.getSnapshotName() == null) {
                throw new SQLException("The source exported no snapshot when creating replication slot " + slotName);
            }
            log.info("created {}replication slot {} at {} with exported snapshot {}", temporary ? "temporary " : "",
                    slotName, slot.getConsistentPoint(), slot.getSnapshotName());
            return new ExportedSnapshot(replication, slot.getSnapshotName(), slot.getConsistentPoint().asString());
        }
        catch (SQLException | RuntimeException e) {
            try {
                replication.close();
            }
            catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            if (timedOut.get()) {
                throw new SlotCreationTimedOutException(slotName, timeoutMillis, e);
            }
            throw e;
        }
        finally {
            watchdog.interrupt();
        }
    }

    /**
     * pgjdbc's slot builder has no {@code FAILOVER} option, and {@code ALTER_REPLICATION_SLOT} on the
     * creating connection would end the snapshot's export: the command is sent as text instead,
     * answering with the builder's columns (slot_name, consistent_point, snapshot_name, output_plugin).
     */
    private static ExportedSnapshot createFailover(Connection replication, String slotName, boolean temporary)
            throws SQLException
    {
        String command = "CREATE_REPLICATION_SLOT " + slotName + (temporary ? " TEMPORARY" : "")
                + " LOGICAL pgoutput (SNAPSHOT 'export', FAILOVER true)";
        try (Statement statement = replication.createStatement();
                ResultSet rows = statement.executeQuery(command)) {
            if (!rows.next() || rows.getString("snapshot_name") == null) {
                throw new SQLException("The source exported no snapshot when creating replication slot " + slotName);
            }
            String snapshot = rows.getString("snapshot_name");
            String lsn = rows.getString("consistent_point");
            log.info("created {}failover replication slot {} at {} with exported snapshot {}",
                    temporary ? "temporary " : "", slotName, lsn, snapshot);
            return new ExportedSnapshot(replication, snapshot, lsn);
        }
    }

    /** Whether the slot exists, and whether a connection uses it. Empty when it does not exist. */
    static java.util.Optional<Boolean> slotActive(Connection connection, String slotName)
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT active FROM pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            statement.setString(1, slotName);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? java.util.Optional.of(rows.getBoolean(1)) : java.util.Optional.empty();
            }
        }
    }

    static void dropSlot(Connection connection, String slotName)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT pg_catalog.pg_drop_replication_slot(?)"))
                {
            statement.setString(1, slotName);
            statement.execute();
        }
    }

    /** Opens a REPEATABLE READ transaction on {@code connection} that reads at this snapshot. */
    void importInto(Connection connection)
            throws SQLException
    {
        connection.setAutoCommit(false);
        connection.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        connection.setReadOnly(true);
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET TRANSACTION SNAPSHOT " + SqlIdentifiers.literal(name));
        }
    }

    /** The slot's consistent point, e.g. {@code 0/16B3748}. */
    String lsn()
    {
        return lsn;
    }

    @Override
    public void close()
            throws SQLException
    {
        replication.close();
    }
}
