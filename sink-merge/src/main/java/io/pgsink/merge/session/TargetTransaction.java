package io.pgsink.merge.session;

import io.pgsink.copy.sql.SqlFailures;
import org.postgresql.PGConnection;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One transaction on a connection of the {@link TargetSession}, from {@link TargetSession#begin()}
 * to exactly one of {@link #commit}, {@link #rollback} or {@link #abandon}, each of which gives the
 * connection back to the session, or discards it when it is lost.
 *
 * <p>A {@code COMMIT} whose answer is lost with the connection leaves the outcome unknown;
 * {@link #commit} then asks the server on another connection (see
 * {@link TargetSession#transactionStatus}) whether the transaction that stored the positions
 * ({@link #positionsStored}) committed.
 *
 * <p>Not thread-safe: used by the thread that began it.
 */
public final class TargetTransaction
{
    private static final Logger log = LoggerFactory.getLogger(TargetTransaction.class);

    private enum State
    {
        OPEN,
        RELEASED,
        DISCARDED,
    }

    private final TargetSession session;
    private final Connection connection;
    private final PGConnection driverConnection;
    /** The transaction's id, as the positions' statement returned it; 0 when unknown. */
    private long transactionId;
    private State state = State.OPEN;

    TargetTransaction(TargetSession session, Connection connection)
            throws SQLException
    {
        this.session = requireNonNull(session, "session is null");
        this.connection = requireNonNull(connection, "connection is null");
        this.driverConnection = connection.unwrap(PGConnection.class);
    }

    public Connection connection()
    {
        return connection;
    }

    /** The driver's connection under any proxy: the session's identity, which its temporary tables belong to. */
    public PGConnection driverConnection()
    {
        return driverConnection;
    }

    /** The id {@code PositionStore#store} returned: 0 when unknown, and a lost {@code COMMIT} cannot be settled. */
    public void positionsStored(long transactionId)
    {
        this.transactionId = transactionId;
    }

    /**
     * Commits. When the connection is lost during {@code COMMIT}, the server may have committed or
     * not; asking it with {@code txid_status} (PostgreSQL 10+) tells which, so that a committed
     * batch is not applied a second time: a replay is harmless for tables with a key, whose keys
     * are deleted and written again, but a table without one ({@code tables.without.key=append-only})
     * would get its rows twice. When the answer cannot be had (Greenplum, an older server, no
     * position stored), the failure is thrown as it was.
     *
     * @param events the events the transaction applies, for the log
     */
    public void commit(long events)
            throws SQLException
    {
        commit(events, Optional.empty());
    }

    /**
     * Runs {@code closing}, the transaction's last statement, and commits, in one round trip (see
     * {@link ClosingStatement}). When the statement fails, the transaction is left open in the failed state
     * ({@link #failedBeforeCommit}) for {@link #abandon}. A connection lost on the way is settled as
     * in {@link #commit(long)}.
     *
     * @param events the events the transaction applies, for the log
     */
    public void commit(long events, Optional<ClosingStatement> closing)
            throws SQLException
    {
        try {
            if (closing.isPresent()) {
                closing.get().executeWith(connection, "; COMMIT");
            }
            // ends the transaction for the pool too; sends nothing when COMMIT ran already
            connection.commit();
        }
        catch (SQLException e) {
            if (transactionId == 0 || failedBeforeCommit() || !isLost()) {
                throw e;
            }
            discard();
            String status = session.transactionStatus(transactionId, e);
            if (!"committed".equals(status)) {
                log.info("{} - the connection was lost while committing {} events; transaction {} is {}, so the batch "
                        + "is applied again",
                        session.sinkName(), events, transactionId, status == null ? "unknown" : status);
                throw e;
            }
            log.warn("{} - the connection was lost while committing {} events, but transaction {} committed: not "
                    + "applying them again",
                    session.sinkName(), events, transactionId);
            return;
        }
        release();
    }

    /**
     * Whether the server answered that the transaction failed and is still open (a statement of it
     * failed), so that its {@code COMMIT} never ran.
     */
    public boolean failedBeforeCommit()
    {
        return driverConnection instanceof BaseConnection driver
                && driver.getTransactionState() == TransactionState.FAILED;
    }

    public void rollback()
            throws SQLException
    {
        connection.rollback();
        release();
    }

    /**
     * Ends the transaction after {@code failure}: rolled back and the connection given back, or,
     * when the failure is a transient SQL failure or the connection is lost, the connection
     * discarded (closing it rolls back). A failure to roll back is added to {@code failure}.
     *
     * @return whether the connection was discarded, now or before (then retrying may succeed)
     */
    public boolean abandon(Exception failure)
    {
        switch (state) {
            case OPEN:
                break;
            case RELEASED:
                return false;
            case DISCARDED:
                return true;
        }
        if (failure instanceof SQLException sqlFailure && (SqlFailures.isTransient(sqlFailure) || isLost())) {
            discard();
            return true;
        }
        try {
            connection.rollback();
        }
        catch (SQLException e) {
            failure.addSuppressed(e);
        }
        release();
        return false;
    }

    private boolean isLost()
    {
        try {
            return connection.isClosed() || !connection.isValid(5);
        }
        catch (SQLException e) {
            return true;
        }
    }

    private void release()
    {
        state = State.RELEASED;
        session.release(connection);
    }

    private void discard()
    {
        state = State.DISCARDED;
        session.discard(connection);
    }
}
