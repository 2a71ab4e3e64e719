package io.pgsink.connector.kafka;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.MovedRows.Move;
import io.pgsink.merge.state.MovedRows;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * The saved old rows of primary-key changes ({@link MovedRows#TABLE}) as {@link KeyChanges} reads
 * them: the table created on first use, the rows found over a connection of their own, the rows no
 * create took deleted now and then. Owned by the task's thread.
 */
final class SavedRows
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(SavedRows.class);
    private static final long PRUNE_EVERY_NANOS = 600_000_000_000L;

    private final String name;
    private final MovedRows rows;
    private final TargetConnector connector;
    private final Supplier<Dialect> dialect;
    private final long pruneSeconds;
    @Nullable
    private Connection connection;
    private boolean tableReady;
    private long lastPruneNanos;

    SavedRows(String name, MovedRows rows, TargetConnector connector, Supplier<Dialect> dialect, long pruneSeconds)
    {
        this.name = requireNonNull(name, "name is null");
        this.rows = requireNonNull(rows, "rows is null");
        this.connector = requireNonNull(connector, "connector is null");
        this.dialect = requireNonNull(dialect, "dialect is null");
        this.pruneSeconds = pruneSeconds;
        this.lastPruneNanos = System.nanoTime();
    }

    /** Deletes saved rows no create took, now and then. */
    void prune()
    {
        long now = System.nanoTime();
        if (!tableReady || now - lastPruneNanos < PRUNE_EVERY_NANOS) {
            return;
        }
        lastPruneNanos = now;
        try {
            Connection open = connection();
            int pruned = rows.prune(open, pruneSeconds);
            open.commit();
            if (pruned > 0) {
                log.info("{} - deleted {} old rows of primary-key changes that no create took within {} s", name,
                        pruned, pruneSeconds);
            }
        }
        catch (SQLException e) {
            closeConnection();
            log.warn("{} - cannot delete the old rows of primary-key changes no create took; trying again later: {}",
                    name, e.getMessage());
        }
    }

    @Override
    public void close()
    {
        closeConnection();
    }

    void ensureTable()
    {
        if (tableReady) {
            return;
        }
        try {
            rows.createTable(connection(), dialect.get());
            tableReady = true;
        }
        catch (SQLException e) {
            closeConnection();
            throw new SinkException(ErrorCode.TRANSIENT, "Cannot create the table " + MovedRows.TABLE
                    + " (the old rows of primary-key changes): " + e.getMessage(), e);
        }
    }

    Map<Move, MovedRows.SavedRow> find(List<Move> moves)
    {
        ensureTable();
        try {
            Connection open = connection();
            Map<Move, MovedRows.SavedRow> found = rows.find(open, moves);
            open.commit();
            return found;
        }
        catch (SQLException e) {
            closeConnection();
            throw new SinkException(ErrorCode.TRANSIENT, "Cannot read the old rows of primary-key changes from "
                    + MovedRows.TABLE + ": " + e.getMessage(), e);
        }
    }

    private Connection connection()
            throws SQLException
    {
        if (connection == null) {
            Connection opened = connector.connect();
            opened.setAutoCommit(false);
            connection = opened;
        }
        return connection;
    }

    private void closeConnection()
    {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (SQLException e) {
                log.debug("{} - closing the connection for moved rows: {}", name, e.getMessage());
            }
            connection = null;
        }
    }
}
