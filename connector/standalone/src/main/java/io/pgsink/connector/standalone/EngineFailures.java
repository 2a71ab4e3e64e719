package io.pgsink.connector.standalone;

import io.pgsink.copy.SqlFailures;
import io.pgsink.core.SinkException;
import org.apache.kafka.connect.errors.RetriableException;
import org.jetbrains.annotations.Nullable;

import java.net.ConnectException;
import java.sql.SQLException;
import java.util.Optional;

/**
 * What the failure a Debezium engine run ended with means to the service, by the taxonomy of
 * {@link SqlFailures}: whether starting over may help, and which exception in the chain says it
 * best. The engine wraps what the sink threw, and Debezium wraps the source's failures.
 */
final class EngineFailures
{
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

    /** The sink's own failure in the chain, whose message names what failed and what to do. */
    static Optional<SinkException> sinkFailure(Throwable error)
    {
        for (Throwable cause = error; cause != null; cause = next(cause)) {
            if (cause instanceof SinkException sinkException) {
                return Optional.of(sinkException);
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
