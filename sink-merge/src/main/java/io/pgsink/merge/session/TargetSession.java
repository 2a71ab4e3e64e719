package io.pgsink.merge.session;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.pool.HikariPool.PoolInitializationException;
import io.pgsink.core.config.TargetDialect;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.dialect.ServerFeatures;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The sink's connections to the target: a HikariCP pool, started on first use, when the session
 * also detects the dialect ({@code target.dialect}, {@code version()}) and the server's version
 * and runs the {@link Setup} (creating the offsets table). Connections are handed out one
 * transaction at a time ({@link #begin()}) and given back after it; a lost one is evicted, and the
 * pool opens a new one.
 *
 * <p>The pool holds one connection: flushes run one at a time, and the one other use, asking
 * whether a transaction whose {@code COMMIT} answer was lost committed
 * ({@link #transactionStatus}), comes after the lost connection was evicted. A second connection
 * would sit idle, holding a backend (and on Greenplum, segment resources) and staging tables of
 * its own. The pool validates a connection idle for more than half a second before handing it out
 * ({@code isValid}, at most {@value #VALIDATION_TIMEOUT_SECONDS} s), pings it while idle, replaces
 * it after {@link #MAX_LIFETIME}, waits at most {@link #CONNECTION_TIMEOUT} for one, and logs a
 * connection held longer than {@link #LEAK_DETECTION_THRESHOLD} (a flush stuck, or one not given
 * back). Its name, {@code pgsink-<sink name>}, prefixes HikariCP's log lines; passwords stay with
 * the {@link TargetConnector}. The first connection is opened while the pool starts, so that a
 * target that cannot be reached fails the first transaction at once, with pgjdbc's error.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class TargetSession
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(TargetSession.class);

    static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(30);
    static final int VALIDATION_TIMEOUT_SECONDS = 5;
    static final Duration KEEPALIVE_TIME = Duration.ofMinutes(2);
    static final Duration MAX_LIFETIME = Duration.ofMinutes(30);
    /** A bit above the longest sane flush. */
    static final Duration LEAK_DETECTION_THRESHOLD = Duration.ofMinutes(10);

    /** What a new session does once, with the dialect detected, before its first transaction. */
    @FunctionalInterface
    public interface Setup
    {
        void setUp(Connection connection, Dialect dialect)
                throws SQLException;
    }

    private final String sinkName;
    private final TargetConnector connector;
    private final TargetDialect dialectSetting;
    private final Setup setup;
    private final Optional<MetricsTrackerFactory> poolMetrics;
    @Nullable
    private HikariDataSource pool;
    private Dialect dialect = Dialect.POSTGRESQL;
    private int serverMajorVersion;

    public TargetSession(String sinkName, TargetConnector connector, TargetDialect dialectSetting, Setup setup,
            Optional<MetricsTrackerFactory> poolMetrics)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.connector = requireNonNull(connector, "connector is null");
        this.dialectSetting = requireNonNull(dialectSetting, "dialectSetting is null");
        this.setup = requireNonNull(setup, "setup is null");
        this.poolMetrics = requireNonNull(poolMetrics, "poolMetrics is null");
    }

    String sinkName()
    {
        return sinkName;
    }

    /** The dialect detected when the pool started; PostgreSQL before. */
    public Dialect dialect()
    {
        return dialect;
    }

    /** Whether the server can apply flushes with {@code MERGE}. */
    public boolean supportsMerge()
    {
        return dialect.features().supportsMerge(serverMajorVersion);
    }

    /**
     * Whether the server applies flushes best with {@code INSERT ... ON CONFLICT DO UPDATE} (see
     * {@link ServerFeatures#prefersUpsert}).
     */
    public boolean supportsUpsert()
    {
        return dialect.features().prefersUpsert(serverMajorVersion);
    }

    /** Whether the server reads pgsink's binary COPY rows (see {@link ServerFeatures#readsBinaryCopy}). */
    public boolean readsBinaryCopy()
    {
        return dialect.features().readsBinaryCopy(serverMajorVersion);
    }

    /** Whether small batches may skip COPY (see {@link ServerFeatures#bindsSmallBatches}). */
    public boolean bindsSmallBatches()
    {
        return dialect.features().bindsSmallBatches();
    }

    /**
     * Starts a transaction (auto-commit is off) on a connection of the pool, starting the pool
     * first when there is none.
     *
     * @throws SQLException when no connection can be had, or setting up the session fails
     */
    TargetTransaction begin()
            throws SQLException
    {
        Connection connection = pool().getConnection();
        try {
            return new TargetTransaction(this, connection);
        }
        catch (SQLException | RuntimeException e) {
            discard(connection);
            throw e;
        }
    }

    private HikariDataSource pool()
            throws SQLException
    {
        if (pool != null) {
            return pool;
        }
        HikariDataSource started;
        try {
            started = new HikariDataSource(poolConfig());
        }
        catch (PoolInitializationException e) {
            if (e.getCause() instanceof SQLException cause) {
                throw cause;
            }
            throw e;
        }
        try (Connection connection = started.getConnection()) {
            String version;
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT version()")) {
                rows.next();
                version = rows.getString(1);
            }
            dialect = Dialect.forSetting(dialectSetting, version);
            serverMajorVersion = connection.getMetaData().getDatabaseMajorVersion();
            setup.setUp(connection, dialect);
            connection.commit();
            log.info("{} - connected to {} target ({})", sinkName, dialect, version);
        }
        catch (SQLException | RuntimeException e) {
            started.close();
            throw e;
        }
        pool = started;
        return started;
    }

    private HikariConfig poolConfig()
    {
        HikariConfig config = new HikariConfig();
        config.setPoolName("pgsink-" + sinkName);
        config.setDataSource(new TargetDataSource(connector));
        config.setAutoCommit(false);
        config.setMaximumPoolSize(1);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(CONNECTION_TIMEOUT.toMillis());
        config.setValidationTimeout(Duration.ofSeconds(VALIDATION_TIMEOUT_SECONDS).toMillis());
        config.setKeepaliveTime(KEEPALIVE_TIME.toMillis());
        config.setMaxLifetime(MAX_LIFETIME.toMillis());
        config.setLeakDetectionThreshold(LEAK_DETECTION_THRESHOLD.toMillis());
        // open the first connection while starting, and fail at once (after a second's pause) without it
        config.setInitializationFailTimeout(1);
        poolMetrics.ifPresent(config::setMetricsTrackerFactory);
        return config;
    }

    /**
     * {@code committed}, {@code aborted}, or null when the server cannot say; asked on a connection
     * of the pool (the one whose answer was lost is evicted first), and waited for while it is
     * {@code in progress}: the lost session may not have finished its commit yet. A failure to ask
     * is added to {@code commitFailure}.
     */
    @Nullable
    String transactionStatus(long transactionId, SQLException commitFailure)
    {
        try (Connection checking = pool()
                .getConnection(); PreparedStatement statement = checking.prepareStatement("SELECT txid_status(?)")) {
            statement.setLong(1, transactionId);
            for (int attempt = 0; ; attempt++) {
                String status;
                try (ResultSet rows = statement.executeQuery()) {
                    status = rows.next() ? rows.getString(1) : null;
                }
                checking.rollback();
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

    /** The transaction on {@code used} ended: the connection goes back to the pool. */
    void release(Connection used)
    {
        try {
            used.close();
        }
        catch (SQLException e) {
            // the pool evicts a connection it could not reset
            log.debug("{} - giving a connection back to the pool failed", sinkName, e);
        }
    }

    /**
     * The connection is lost or suspect: evicted from the pool, which closes it (rolling back what
     * it did not commit) and opens another. Not given back first: a broken connection must not
     * be handed out again.
     */
    void discard(Connection broken)
    {
        HikariDataSource current = pool;
        if (current != null) {
            current.evictConnection(broken);
        }
    }

    /** Closes the pool and every connection, waiting for them to close. */
    @Override
    public void close()
    {
        HikariDataSource current = pool;
        pool = null;
        if (current != null) {
            current.close();
        }
    }
}
