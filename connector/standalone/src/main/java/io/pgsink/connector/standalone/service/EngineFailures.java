package io.pgsink.connector.standalone.service;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.errors.RetriableException;
import org.jetbrains.annotations.Nullable;

import java.net.ConnectException;
import java.sql.SQLException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the failure a Debezium engine run ended with means to the service, by the taxonomy of
 * {@link SqlFailures}: whether starting over may help, and which exception in the chain says it
 * best. The engine wraps what the sink threw, and Debezium wraps the source's failures.
 */
final class EngineFailures
{
    /** foreign_key_violation: a row references a key its table lacks, or a deleted key is still referenced. */
    static final String FOREIGN_KEY_VIOLATION = "23503";
    private static final Pattern CONSTRAINT = Pattern.compile("foreign key constraint \"([^\"]+)\"");

    private EngineFailures() {}

    /**
     * Whether starting over may help: the first {@link SinkException} in the cause chain decides,
     * or the first {@link SQLException} refusing access (login, privilege, database: never
     * retried); otherwise a transient {@link SQLException}, a Connect {@link RetriableException} or
     * a refused socket connection anywhere in the chain make it retriable.
     */
    static boolean isRetriable(Throwable error)
    {
        boolean retriable = false;
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (cause instanceof SinkException sinkException) {
                return sinkException.isTransient();
            }
            if (cause instanceof SQLException sqlException) {
                if (SqlFailures.isAccessFailure(sqlException)) {
                    return false;
                }
                retriable |= SqlFailures.isTransient(sqlException);
            }
            retriable |= cause instanceof RetriableException || cause instanceof ConnectException;
        }
        return retriable;
    }

    /**
     * The sink's own failure in the chain, whose message names what failed and what to do; a
     * foreign key violation gets the remedies added ({@link #withForeignKeyRemedy}).
     */
    static Optional<SinkException> sinkFailure(Throwable error)
    {
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (cause instanceof SinkException sinkException) {
                return Optional.of(withForeignKeyRemedy(sinkException));
            }
        }
        return Optional.empty();
    }

    /**
     * {@code failure}, with what to do added when a foreign key of the target refused a row
     * (SQLState 23503): a flush applies one table after another, so a child inserted in the same
     * source transaction as its parent (or a parent deleted with its child) may be applied first.
     * Either the sink's connections skip foreign key checks, as a replica's do, or the target
     * checks the constraint at commit, when the flush (one transaction) has applied every table.
     */
    static SinkException withForeignKeyRemedy(SinkException failure)
    {
        for (Throwable cause = failure; cause != null; cause = next(cause)) {
            if (cause instanceof SQLException sql && FOREIGN_KEY_VIOLATION.equals(sql.getSQLState())) {
                Matcher constraint = CONSTRAINT.matcher(String.valueOf(sql.getMessage()));
                String name = constraint.find() ? "\"" + constraint.group(1) + "\"" : "<constraint>";
                return new SinkException(failure.errorCode(), failure.getMessage()
                        + ". What to do: a flush applies one table after another, so a row may arrive before the row"
                        + " it references when both changed in one source transaction. Either set "
                        + SinkConfig.TARGET_SESSION_REPLICATION_ROLE + "=replica (the sink's"
                        + " connections then skip foreign key checks; it needs a superuser, or on PostgreSQL 15+ "
                        + "GRANT SET ON PARAMETER session_replication_role), or make"
                        + " the constraint DEFERRABLE INITIALLY DEFERRED (ALTER TABLE <table> ALTER CONSTRAINT "
                        + name + " DEFERRABLE INITIALLY DEFERRED): one flush is"
                        + " one transaction, so the target checks it at commit, when every table of the flush is "
                        + "applied", failure);
            }
        }
        return failure;
    }

    /** The first {@link SQLException} in the chain, which says what the server refused. */
    static Optional<SQLException> sqlFailure(Throwable error)
    {
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (cause instanceof SQLException sql) {
                return Optional.of(sql);
            }
        }
        return Optional.empty();
    }

    /** Whether {@code error} or one of its causes is a {@code type}. */
    static boolean causes(@Nullable Throwable error, Class<? extends Throwable> type)
    {
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }

    /** Whether {@code error} or a cause of it says {@code text}. */
    static boolean mentions(@Nullable Throwable error, String text)
    {
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (String.valueOf(cause.getMessage()).contains(text)) {
                return true;
            }
        }
        return false;
    }

    @Nullable
    private static Throwable next(Throwable cause)
    {
        return cause.getCause() == cause ? null : cause.getCause();
    }
}
