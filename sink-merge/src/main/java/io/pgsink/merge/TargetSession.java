package io.pgsink.merge;

import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static java.util.Objects.requireNonNull;

/**
 * The sink's connection to the target: opened on first use, when it also detects the dialect
 * ({@code target.dialect}, {@code version()}) and the server's version and runs the
 * {@link Setup} (creating the offsets table); handed out one transaction at a time
 * ({@link #begin()}); discarded when lost, after which the next transaction opens a new one.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
final class TargetSession
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(TargetSession.class);

    /** What a new session does once, with the dialect detected, before its first transaction. */
    @FunctionalInterface
    interface Setup
    {
        void setUp(Connection connection, Dialect dialect)
                throws SQLException;
    }

    private final String sinkName;
    private final TargetConnector connector;
    private final String dialectSetting;
    private final Setup setup;
    @Nullable
    private Connection connection;
    private Dialect dialect = Dialect.POSTGRESQL;
    private int serverMajorVersion;

    TargetSession(String sinkName, TargetConnector connector, String dialectSetting, Setup setup)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.connector = requireNonNull(connector, "connector is null");
        this.dialectSetting = requireNonNull(dialectSetting, "dialectSetting is null");
        this.setup = requireNonNull(setup, "setup is null");
    }

    String sinkName()
    {
        return sinkName;
    }

    /** The dialect detected on the current (or last) connection; PostgreSQL before the first. */
    Dialect dialect()
    {
        return dialect;
    }

    /** Whether the server can apply flushes with {@code MERGE}. */
    boolean supportsMerge()
    {
        return dialect.features().supportsMerge(serverMajorVersion);
    }

    /**
     * Starts a transaction (auto-commit is off), on a new connection when there is none.
     *
     * @throws SQLException when no connection can be had, or setting it up fails
     */
    TargetTransaction begin()
            throws SQLException
    {
        if (connection == null) {
            connection = open();
        }
        return new TargetTransaction(this, connection);
    }

    private Connection open()
            throws SQLException
    {
        Connection opened = connector.connect();
        try {
            opened.setAutoCommit(false);
            String version;
            try (Statement statement = opened.createStatement(); ResultSet rows = statement.executeQuery("SELECT version()")) {
                rows.next();
                version = rows.getString(1);
            }
            dialect = Dialect.forSetting(dialectSetting, version);
            serverMajorVersion = opened.getMetaData().getDatabaseMajorVersion();
            setup.setUp(opened, dialect);
            log.info("{} - connected to {} target ({})", sinkName, dialect, version);
            return opened;
        }
        catch (SQLException | RuntimeException e) {
            try {
                opened.close();
            }
            catch (SQLException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    /**
     * {@code committed}, {@code aborted}, or null when the server cannot say; asked on a connection
     * of its own, and waited for while it is {@code in progress}: the lost session may not have
     * finished its commit yet. A failure to ask is added to {@code commitFailure}.
     */
    @Nullable
    String transactionStatus(long transactionId, SQLException commitFailure)
    {
        try (Connection checking = connector.connect(); PreparedStatement statement = checking.prepareStatement("SELECT txid_status(?)")) {
            statement.setLong(1, transactionId);
            for (int attempt = 0; ; attempt++) {
                String status;
                try (ResultSet rows = statement.executeQuery()) {
                    status = rows.next() ? rows.getString(1) : null;
                }
                if (!"in progress".equals(status) || attempt == 50) {
                    return "in progress".equals(status) ? null : status;
                }
                Thread.sleep(200);
            }
        }
        catch (SQLException e) {
            commitFailure.addSuppressed(e);
            return null;
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** The transaction on {@code used} ended; the connection is kept for the next one. */
    void release(Connection used)
    {
        requireNonNull(used, "used is null");
    }

    /** The connection is lost or suspect: closed, and the next transaction opens a new one. */
    void discard(Connection broken)
    {
        if (broken == connection) {
            connection = null;
        }
        try {
            broken.close();
        }
        catch (SQLException e) {
            log.debug("{} - closing a broken connection failed", sinkName, e);
        }
    }

    @Override
    public void close()
    {
        if (connection != null) {
            discard(connection);
        }
    }
}
