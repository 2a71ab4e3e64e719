package io.pgsink.connector.standalone.preflight;

import io.pgsink.connector.standalone.preflight.Checker.Result;
import io.pgsink.connector.standalone.preflight.Checker.Status;
import io.pgsink.connector.standalone.source.SourceDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What {@link Checker} verifies of the source's replication slot: that it exists for pgoutput and
 * this database, or that a free slot is left to create it; and, with {@code source.slot.failover},
 * what the primary shows of slot synchronization.
 *
 * <p>Not thread-safe: made for one run of a {@link Checker}, whose results it adds to.
 */
final class SlotCheck
{
    private final SourceDatabase source;
    private final String subject;
    private final List<Result> results;

    SlotCheck(SourceDatabase source, String subject, List<Result> results)
    {
        this.source = requireNonNull(source, "source is null");
        this.subject = requireNonNull(subject, "subject is null");
        this.results = requireNonNull(results, "results is null");
    }

    void checkSlot(Connection connection, int maxSlots, int usedSlots)
            throws SQLException
    {
        String slot = source.slotName();
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT plugin, database, active, confirmed_flush_lsn FROM "
                + "pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    String plugin = rows.getString(1);
                    String database = rows.getString(2);
                    if (!"pgoutput".equals(plugin)) {
                        add(Status.FAIL,
                                "replication slot " + slot + " exists but uses plugin " + plugin
                                + ", not pgoutput (drop it, or set source.slot.name)");
                    }
                    else if (!source.database().equals(database)) {
                        add(Status.FAIL,
                                "replication slot " + slot + " belongs to database " + database + ", not "
                                + source.database() + " (set source.slot.name)");
                    }
                    else {
                        add(Status.OK,
                                "replication slot " + slot + " exists (" + (rows.getBoolean(3) ? "in use" : "idle")
                                + ", confirmed up to " + rows.getString(4) + ")");
                    }
                    return;
                }
            }
        }
        if (usedSlots >= maxSlots) {
            add(Status.FAIL,
                    "replication slot " + slot + " does not exist and all " + maxSlots
                    + " slots are taken (raise max_replication_slots or drop an unused slot)");
        }
        else {
            add(Status.OK,
                    "replication slot " + slot + " will be created (" + usedSlots + " of " + maxSlots
                    + " slots in use)");
        }
    }

    /**
     * {@code source.slot.failover}: refused before PostgreSQL 17; on 17+, what the primary shows of
     * slot synchronization. The standby's settings are out of sight, so these are warnings.
     */
    void checkFailover(Connection connection, int versionNum, String version)
            throws SQLException
    {
        if (!source.failoverSlot()) {
            return;
        }
        Optional<String> problem = source.failoverProblem(versionNum, version);
        if (problem.isPresent()) {
            add(Status.FAIL, problem.get());
            return;
        }
        String slot = source.slotName();
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT current_setting('synchronized_standby_slots')")) {
            rows.next();
            String standbySlots = rows.getString(1);
            if (standbySlots.isEmpty()) {
                add(Status.WARN, "synchronized_standby_slots is empty: " + slot
                        + " may confirm changes a standby has not received, and its synchronized copy could"
                        + " then be unusable after failover (set it to the standby's physical slot)");
            }
            else {
                add(Status.OK, "synchronized_standby_slots is " + standbySlots);
            }
        }
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT failover FROM pg_catalog.pg_replication_slots WHERE slot_name = ?")) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    if (rows.getBoolean(1)) {
                        add(Status.OK, "replication slot " + slot + " is a failover slot");
                    }
                    else {
                        add(Status.WARN, "replication slot " + slot + " exists without failover ("
                                + SourceDatabase.FAILOVER_KEY
                                + " applies when the slot is created: ALTER_REPLICATION_SLOT " + slot
                                + " (FAILOVER true) on a replication connection while pgsink is stopped)");
                    }
                }
            }
        }
        add(Status.WARN, "the standby is out of sight; for " + slot
                + " to survive a failover it needs sync_replication_slots=on,"
                + " hot_standby_feedback=on, primary_slot_name set, and dbname in primary_conninfo");
    }

    private void add(Status status, String message)
    {
        results.add(new Result(status, subject, message));
    }
}
