package io.pgsink.merge;

import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Classifies SQL failures by SQLState and turns them into {@link SinkException}s whose messages
 * never carry row values: the server's DETAIL (which can quote a whole row) is left out, and a
 * value quoted at the end of a message is replaced.
 */
final class SqlErrors
{
    static final String SERIALIZATION_FAILURE = "40001";
    static final String DEADLOCK_DETECTED = "40P01";
    static final String ADMIN_SHUTDOWN = "57P01";
    static final String CRASH_SHUTDOWN = "57P02";
    static final String CANNOT_CONNECT_NOW = "57P03";
    static final String QUERY_CANCELED = "57014";
    static final String TOO_MANY_CONNECTIONS = "53300";
    static final String UNIQUE_VIOLATION = "23505";
    static final String UNDEFINED_TABLE = "42P01";
    static final String DUPLICATE_TABLE = "42P07";
    /** Also raised by a racing CREATE TABLE, for the table's row type. */
    static final String DUPLICATE_OBJECT = "42710";
    static final String UNDEFINED_COLUMN = "42703";

    private static final Pattern QUOTED_VALUE = Pattern.compile(": \".*\"$", Pattern.DOTALL);
    private static final Pattern COPY_LINE = Pattern.compile("line (\\d+)(?:, column ([^:]+))?");

    private SqlErrors() {}

    static boolean isTransient(SQLException e)
    {
        String state = e.getSQLState();
        if (state == null) {
            return false;
        }
        return PSQLState.isConnectionError(state)
                || state.startsWith("08")
                || state.equals(SERIALIZATION_FAILURE)
                || state.equals(DEADLOCK_DETECTED)
                || state.equals(ADMIN_SHUTDOWN)
                || state.equals(CRASH_SHUTDOWN)
                || state.equals(CANNOT_CONNECT_NOW)
                || state.equals(QUERY_CANCELED)
                || state.equals(TOO_MANY_CONNECTIONS);
    }

    static ErrorCode classify(SQLException e)
    {
        if (isTransient(e)) {
            return ErrorCode.TRANSIENT;
        }
        String state = e.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return ErrorCode.DATA;
        }
        return ErrorCode.SCHEMA_MISMATCH;
    }

    static SinkException translate(SQLException e, String context)
    {
        SinkException exception = new SinkException(classify(e), context + ": " + describe(e), e);
        SQLException next = e.getNextException();
        while (next != null) {
            exception.addSuppressed(next);
            next = next.getNextException();
        }
        return exception;
    }

    /** SQLState and the server's message (value-free), without DETAIL. */
    static String describe(SQLException e)
    {
        String message = e.getMessage();
        if (e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
            ServerErrorMessage server = psql.getServerErrorMessage();
            message = server.getMessage();
        }
        if (message == null) {
            message = e.getClass().getSimpleName();
        }
        message = QUOTED_VALUE.matcher(message).replaceFirst(": <value>");
        return message + " [SQLState " + e.getSQLState() + "]";
    }

    /** The column named by a COPY failure, or null. */
    static String copyColumn(SQLException e)
    {
        Matcher matcher = whereMatcher(e);
        return matcher != null ? matcher.group(2) : null;
    }

    private static Matcher whereMatcher(SQLException e)
    {
        if (!(e instanceof PSQLException psql) || psql.getServerErrorMessage() == null || psql.getServerErrorMessage().getWhere() == null) {
            return null;
        }
        Matcher matcher = COPY_LINE.matcher(psql.getServerErrorMessage().getWhere());
        return matcher.find() ? matcher : null;
    }
}
