package io.pgsink.merge.write;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.TableId;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.session.TargetTransaction;
import org.postgresql.PGConnection;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.WeakHashMap;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * The staging tables a flush COPYs into: temporary, {@code ON COMMIT DELETE ROWS}, created once per
 * physical connection and table version in a transaction of their own (catalog changes are
 * expensive on an MPP cluster), and reused by every flush on that connection.
 *
 * <p>Temporary tables belong to a session, so they are tracked per physical connection: the
 * driver's connection, whichever pool proxy hands it out. A connection the pool opens anew (after
 * one was lost, or retired at its maximum lifetime) gets its staging tables created on first use;
 * one the pool closed is forgotten with it (weak keys). When a session loses its temporary tables
 * anyway (Greenplum drops them when it resets the segments' gang; {@code DISCARD TEMP} does it on
 * PostgreSQL), the flush fails with {@link #isLost}, the caller {@link #forget}s the connection
 * and applies the batch again.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class StagingTables
{
    private static final String PREFIX = "pgsink_stage_";

    /** Per physical connection: the plan each existing staging table was created for, by target table. */
    private final Map<PGConnection, Map<TableId, TablePlan>> staged = new WeakHashMap<>();
    private int sequence;

    /**
     * A new staging table name for {@code target}: every table version gets one of its own, since
     * the previous version's may still exist on other connections. Lower case letters, digits and
     * underscores of the table's name, after a sequence number that keeps names apart.
     */
    public String newName(TableId target)
    {
        StringBuilder name = new StringBuilder(PREFIX).append(++sequence).append('_');
        String table = target.table().toLowerCase(Locale.ROOT);
        for (int i = 0; i < table.length() && name.length() < 60; i++) {
            char c = table.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
                name.append(c);
            }
        }
        return name.toString();
    }

    /**
     * Creates the staging tables of {@code plans} that the transaction's connection lacks (dropping
     * an earlier version's), and commits when it created one, before the data transaction starts.
     */
    public void prepare(TargetTransaction transaction, List<TablePlan> plans)
            throws SQLException
    {
        Map<TableId, TablePlan> existing = staged.computeIfAbsent(transaction.driverConnection(),
                ignored -> new HashMap<>());
        Connection connection = transaction.connection();
        boolean created = false;
        for (TablePlan plan : plans) {
            if (plan.appendOnly || existing.get(plan.target.id()) == plan) {
                continue;
            }
            TablePlan previous = existing.remove(plan.target.id());
            try (Statement statement = connection.createStatement()) {
                if (previous != null) {
                    statement.execute("DROP TABLE IF EXISTS " + quote(previous.stagingName));
                }
                statement.execute(plan.createStaging);
            }
            created = true;
            existing.put(plan.target.id(), plan);
        }
        if (created) {
            connection.commit();
        }
    }

    /**
     * The session of the transaction's connection has lost its staging tables: they are created again on its next use.
     */
    public void forget(TargetTransaction transaction)
    {
        staged.remove(transaction.driverConnection());
    }

    /** Whether {@code failure} says that a staging table is gone from its session. */
    public static boolean isLost(SQLException failure)
    {
        return SqlFailures.UNDEFINED_TABLE.equals(failure.getSQLState()) && failure.getMessage() != null
                && failure.getMessage().contains(PREFIX);
    }
}
