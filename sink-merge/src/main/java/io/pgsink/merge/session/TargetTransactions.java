package io.pgsink.merge.session;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.sql.Connection;
import java.sql.SQLException;

import static java.util.Objects.requireNonNull;

/**
 * Begins the session's transactions and says what their failures mean (by the taxonomy of
 * {@link SqlFailures}): transient when no connection can be had or it was lost with the failure,
 * {@link ErrorCode#CONFIG} with what to do when the server refused the login, a privilege or the
 * database, else the failure's class. Runs the small bookkeeping transactions of the applier
 * (positions, writer generations) whole.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class TargetTransactions
{
    /** Work on the transaction's connection. */
    @FunctionalInterface
    public interface Work<T>
    {
        T run(Connection connection)
                throws SQLException;
    }

    private final TargetSession session;
    /** Told when a failure says the target's catalog changed (a table or column is gone). */
    private final Runnable catalogChanged;

    public TargetTransactions(TargetSession session, Runnable catalogChanged)
    {
        this.session = requireNonNull(session, "session is null");
        this.catalogChanged = requireNonNull(catalogChanged, "catalogChanged is null");
    }

    /** Runs {@code work} in a transaction of its own and commits it. */
    public <T> T run(String context, Work<T> work)
    {
        TargetTransaction transaction = begin(context);
        try {
            T result = work.run(transaction.connection());
            // no position stored by this work: a lost COMMIT answer cannot be settled, nor needs to be
            transaction.commit(0);
            return result;
        }
        catch (SQLException e) {
            throw failed(transaction, e, context);
        }
        catch (RuntimeException e) {
            transaction.abandon(e);
            throw e;
        }
    }

    /**
     * A transaction. When no connection can be had, a {@link ErrorCode#TRANSIENT} failure (the
     * target may come back), unless the server refused the login, a privilege or the database
     * ({@link SqlFailures#isAccessFailure}): then {@link ErrorCode#CONFIG}, saying what to do.
     */
    public TargetTransaction begin(String context)
    {
        try {
            return session.begin();
        }
        catch (SQLException e) {
            throw SqlFailures.isAccessFailure(e) ? accessFailure(e, context)
                    : SqlFailures.translate(e, ErrorCode.TRANSIENT, context);
        }
    }

    /** Ends the transaction after {@code e} and says what it means: transient when the connection went with it. */
    public SinkException failed(TargetTransaction transaction, SQLException e, String context)
    {
        if (transaction.abandon(e)) {
            return SqlFailures.translate(e, ErrorCode.TRANSIENT, context);
        }
        String state = e.getSQLState();
        if (SqlFailures.UNDEFINED_TABLE.equals(state) || SqlFailures.UNDEFINED_COLUMN.equals(state)) {
            catalogChanged.run();
        }
        return SqlFailures.isAccessFailure(e) ? accessFailure(e, context) : SqlFailures.translate(e, context);
    }

    /** The server refused the login, a privilege or the database: {@link ErrorCode#CONFIG}, with what to do. */
    private static SinkException accessFailure(SQLException e, String context)
    {
        String remedy = SqlFailures.remedy(e, SinkConfig.TARGET_USER, SinkConfig.TARGET_PASSWORD, SinkConfig.TARGET_URL)
                .orElseThrow();
        return SqlFailures.translate(e, ErrorCode.CONFIG, context, ". What to do: " + remedy);
    }
}
