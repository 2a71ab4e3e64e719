package io.pgsink.copy;

import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
import org.jetbrains.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * pgsink's one vocabulary for SQL failures: which are worth retrying (by SQLState), which
 * {@link ErrorCode} they get, and how they read without row values. Every module that reports a
 * {@link SQLException} to a user or a log goes through here: the merge applier, the COPY loader and
 * the adapters (the standalone service asks {@link #isTransient} whether to start over).
 *
 * <p>Descriptions never carry row values: the server's DETAIL (which can quote a whole row) is left
 * out, and so is a value the message quotes ({@code invalid input syntax for type integer: "..."},
 * {@code value "..." is out of range for type smallint}): row values may be personal data, and
 * this text ends up in logs and dead-letter tables.
 */
public final class SqlFailures
{
    public static final String UNIQUE_VIOLATION = PSQLState.UNIQUE_VIOLATION.getState();
    public static final String UNDEFINED_TABLE = PSQLState.UNDEFINED_TABLE.getState();
    public static final String UNDEFINED_COLUMN = PSQLState.UNDEFINED_COLUMN.getState();
    public static final String DUPLICATE_TABLE = "42P07";
    /** Also raised by a racing CREATE TABLE, for the table's row type. */
    public static final String DUPLICATE_OBJECT = "42710";
    /** Class 57P, operator intervention: shutdown, crash, starting up, database dropped, idle session timeout. */
    private static final String OPERATOR_INTERVENTION_CLASS = "57P";
    private static final String TOO_MANY_CONNECTIONS = "53300";
    /** Class 08, connection exception. */
    private static final String CONNECTION_EXCEPTION_CLASS = "08";

    /** The start of a COPY context line, {@code COPY t, line 3}. */
    private static final Pattern COPY_CONTEXT = Pattern.compile("^COPY .*?, line (\\d+)", Pattern.MULTILINE);
    private static final Pattern COPY_COLUMN = Pattern.compile("line (\\d+)(?:, column ([^:]+))?");
    private static final Pattern VALUE_OUT_OF_RANGE = Pattern.compile("value \".*\" is out of range for type (.*)", Pattern.DOTALL);
    private static final Pattern TRAILING_VALUE = Pattern.compile("(.*?): \".*\"", Pattern.DOTALL);

    private SqlFailures() {}

    /**
     * Whether retrying may succeed: the connection failed or was closed by the server (shutdown,
     * restart, idle timeout), the server is starting or out of connection slots, or the transaction
     * lost a serialization conflict or a deadlock, or was cancelled.
     */
    public static boolean isTransient(SQLException e)
    {
        requireNonNull(e, "e is null");
        String state = e.getSQLState();
        if (state == null) {
            return false;
        }
        return PSQLState.isConnectionError(state)
                || state.startsWith(CONNECTION_EXCEPTION_CLASS)
                || state.startsWith(OPERATOR_INTERVENTION_CLASS)
                || state.equals(PSQLState.SERIALIZATION_FAILURE.getState())
                || state.equals(PSQLState.DEADLOCK_DETECTED.getState())
                || state.equals(PSQLState.QUERY_CANCELED.getState())
                || state.equals(TOO_MANY_CONNECTIONS);
    }

    /** {@link ErrorCode#TRANSIENT} (see {@link #isTransient}), {@link ErrorCode#DATA} for data exceptions and integrity violations (classes 22 and 23), else {@link ErrorCode#SCHEMA_MISMATCH}. */
    public static ErrorCode classify(SQLException e)
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

    /** A {@link SinkException} of the failure's class, {@code context: description}; the {@code getNextException()} chain becomes suppressed exceptions. */
    public static SinkException translate(SQLException e, String context)
    {
        SinkException exception = new SinkException(classify(e), context + ": " + describe(e), e);
        SQLException next = e.getNextException();
        while (next != null) {
            exception.addSuppressed(next);
            next = next.getNextException();
        }
        return exception;
    }

    /** The message without values, then the SQLState: {@code value too long for type character varying(8) [SQLState 22001]}. */
    public static String describe(SQLException e)
    {
        return message(e) + " [SQLState " + e.getSQLState() + "]";
    }

    /**
     * The COPY form: SQLState, message without values, and the context naming the COPY line and
     * column ({@code SQLState 22P02: invalid input syntax for type smallint (COPY t, line 3, column n)}).
     */
    public static String describeCopy(SQLException e)
    {
        String state = e.getSQLState() == null ? "none" : e.getSQLState();
        StringBuilder description = new StringBuilder("SQLState ").append(state).append(": ").append(message(e));
        String where = where(e);
        if (where != null && !where.isEmpty()) {
            description.append(" (").append(withoutValueInContext(where)).append(')');
        }
        return description.toString();
    }

    /** The column a COPY failure names ({@code COPY t, line 3, column b}), or null. */
    @Nullable
    public static String copyColumn(SQLException e)
    {
        String where = where(e);
        if (where == null) {
            return null;
        }
        Matcher matcher = COPY_COLUMN.matcher(where);
        return matcher.find() ? matcher.group(2) : null;
    }

    /** The line number a COPY failure names ({@code COPY t, line 3}), or -1. */
    static long copyLine(ServerErrorMessage server)
    {
        if (server.getWhere() == null) {
            return -1;
        }
        Matcher matcher = COPY_CONTEXT.matcher(server.getWhere());
        if (!matcher.find()) {
            return -1;
        }
        try {
            return Long.parseLong(matcher.group(1));
        }
        catch (NumberFormatException ignored) {
            return -1;
        }
    }

    /** The server's message (or, for a failure of pgjdbc itself, the driver's), without a value it quotes. */
    private static String message(SQLException e)
    {
        String message = e.getMessage();
        if (e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
            message = psql.getServerErrorMessage().getMessage();
        }
        if (message == null) {
            return e.getClass().getSimpleName();
        }
        return withoutValue(message);
    }

    @Nullable
    private static String where(SQLException e)
    {
        if (e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
            return psql.getServerErrorMessage().getWhere();
        }
        return null;
    }

    /** Drops the input value PostgreSQL quotes in data errors such as {@code invalid input syntax for type integer: "x"}. */
    private static String withoutValue(String message)
    {
        Matcher outOfRange = VALUE_OUT_OF_RANGE.matcher(message);
        if (outOfRange.matches()) {
            return "value is out of range for type " + outOfRange.group(1);
        }
        Matcher trailing = TRAILING_VALUE.matcher(message);
        if (trailing.matches()) {
            return trailing.group(1);
        }
        return message;
    }

    /**
     * Cuts a context after {@code COPY t, line 3[, column b]}: what follows quotes the column's value
     * or the whole line ({@code : "..."}), which may span lines itself.
     */
    private static String withoutValueInContext(String where)
    {
        Matcher matcher = COPY_CONTEXT.matcher(where);
        if (!matcher.find()) {
            return where;
        }
        int end = matcher.end();
        String column = ", column ";
        if (where.startsWith(column, end)) {
            int value = where.indexOf(": \"", end + column.length());
            int newline = where.indexOf('\n', end + column.length());
            end = where.length();
            if (value >= 0) {
                end = value;
            }
            if (newline >= 0 && newline < end) {
                end = newline;
            }
        }
        return where.substring(0, end);
    }
}
