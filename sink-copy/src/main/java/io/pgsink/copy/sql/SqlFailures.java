package io.pgsink.copy.sql;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * pgsink's one vocabulary for SQL failures: which are worth retrying (by SQLState), which
 * {@link ErrorCode} they get, and how they read without row values. Every module that reports a
 * {@link SQLException} to a user or a log goes through here: the merge applier, the COPY loader and
 * the adapters (the standalone service asks {@link #isTransient} whether to start over).
 *
 * <p>The taxonomy, one place for both adapters:
 * <ul>
 * <li>transient ({@link #isTransient}), retried with backoff: connection exceptions (class 08),
 *     administrator shutdown, crash shutdown and "cannot connect now" while the server starts
 *     (57P01, 57P02, 57P03) and an idle session timeout (57P05), serialization failures and
 *     deadlocks (40001, 40P01), a cancelled statement (57014), too many connections (53300);</li>
 * <li>permanent access failures ({@link #isAccessFailure}), which stop the sink with
 *     {@link ErrorCode#CONFIG} and a {@link #remedy}: authentication (class 28: 28P01 wrong
 *     password, 28000 role may not log in or does not exist), missing privilege (42501), missing
 *     database (3D000) or a database dropped under the sink (57P04);</li>
 * <li>{@link ErrorCode#DATA}: data exceptions and integrity violations (classes 22 and 23), one
 *     row's fault;</li>
 * <li>everything else is {@link ErrorCode#SCHEMA_MISMATCH} and stops the sink.</li>
 * </ul>
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
    /**
     * Class 57P, operator intervention: administrator shutdown, crash shutdown, cannot connect now (starting up), idle
     * session timeout; not 57P04, database dropped.
     */
    private static final Set<String> OPERATOR_INTERVENTION = Set.of("57P01", "57P02", "57P03", "57P05");
    /**
     * Class 28, invalid authorization specification: wrong password (28P01), role may not log in or does not exist
     * (28000).
     */
    private static final String INVALID_AUTHORIZATION_CLASS = "28";
    public static final String INSUFFICIENT_PRIVILEGE = "42501";
    private static final String INVALID_CATALOG_NAME = "3D000";
    private static final String DATABASE_DROPPED = "57P04";
    private static final String TOO_MANY_CONNECTIONS = "53300";
    /** Class 08, connection exception. */
    private static final String CONNECTION_EXCEPTION_CLASS = "08";

    /** The start of a COPY context line, {@code COPY t, line 3}. */
    private static final Pattern COPY_CONTEXT = Pattern.compile("^COPY .*?, line (\\d+)", Pattern.MULTILINE);
    private static final Pattern COPY_COLUMN = Pattern.compile("line (\\d+)(?:, column ([^:]+))?");
    private static final Pattern VALUE_OUT_OF_RANGE = Pattern.compile("value \".*\" is out of range for type (.*)",
            Pattern.DOTALL);
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
            // HikariCP's "connection is not available" when the failure behind it had no state
            return e instanceof SQLTransientException || e instanceof SQLRecoverableException;
        }
        return PSQLState.isConnectionError(state)
                || state.startsWith(CONNECTION_EXCEPTION_CLASS)
                || OPERATOR_INTERVENTION.contains(state)
                || state.equals(PSQLState.SERIALIZATION_FAILURE.getState())
                || state.equals(PSQLState.DEADLOCK_DETECTED.getState())
                || state.equals(PSQLState.QUERY_CANCELED.getState())
                || state.equals(TOO_MANY_CONNECTIONS);
    }

    /**
     * Whether the server refused the sink's user, its privileges or its database: authentication
     * (class 28), a missing privilege (42501), a missing or dropped database (3D000, 57P04). An
     * operator has to act; retrying cannot help.
     */
    public static boolean isAccessFailure(SQLException e)
    {
        requireNonNull(e, "e is null");
        String state = e.getSQLState();
        return state != null && (state.startsWith(INVALID_AUTHORIZATION_CLASS)
                || state.equals(INSUFFICIENT_PRIVILEGE)
                || state.equals(INVALID_CATALOG_NAME)
                || state.equals(DATABASE_DROPPED));
    }

    /**
     * What an operator does about an {@linkplain #isAccessFailure access failure}, naming the
     * configuration keys given ({@code user}, {@code password}, {@code url}); empty for others.
     */
    public static Optional<String> remedy(SQLException e, String userKey, String passwordKey, String urlKey)
    {
        String state = e.getSQLState();
        if (state == null || !isAccessFailure(e)) {
            return Optional.empty();
        }
        if (state.startsWith(INVALID_AUTHORIZATION_CLASS)) {
            return Optional.of("the server refused the login: check " + userKey + " and " + passwordKey
                    + " (and the server's pg_hba.conf), then start pgsink again");
        }
        if (state.equals(INSUFFICIENT_PRIVILEGE)) {
            return Optional.of("the user " + userKey + " names lacks a privilege: grant it"
                    + " (see docs/guides/security.md, Privileges of the target role), then start pgsink again");
        }
        return Optional.of("the database in " + urlKey + " does not exist: create it or fix " + urlKey
                + ", then start pgsink again");
    }

    /**
     * {@link ErrorCode#TRANSIENT} (see {@link #isTransient}), {@link ErrorCode#CONFIG} for access
     * failures (see {@link #isAccessFailure}), {@link ErrorCode#DATA} for data exceptions and
     * integrity violations (classes 22 and 23), else {@link ErrorCode#SCHEMA_MISMATCH}.
     */
    public static ErrorCode classify(SQLException e)
    {
        if (isTransient(e)) {
            return ErrorCode.TRANSIENT;
        }
        if (isAccessFailure(e)) {
            return ErrorCode.CONFIG;
        }
        String state = e.getSQLState();
        if (state != null && (state.startsWith("22") || state.startsWith("23"))) {
            return ErrorCode.DATA;
        }
        return ErrorCode.SCHEMA_MISMATCH;
    }

    /**
     * A {@link SinkException} of the failure's class, {@code context: description}; its cause is
     * the {@linkplain #sanitized sanitized} failure, and the {@code getNextException()} chain
     * becomes suppressed exceptions, sanitized too.
     */
    public static SinkException translate(SQLException e, String context)
    {
        return translate(e, classify(e), context);
    }

    /** {@link #translate(SQLException, String)} with the class given. */
    public static SinkException translate(SQLException e, ErrorCode errorCode, String context)
    {
        return translate(e, errorCode, context, "");
    }

    /** {@link #translate(SQLException, ErrorCode, String)}, the message ending with {@code suffix} (what to do). */
    public static SinkException translate(SQLException e, ErrorCode errorCode, String context, String suffix)
    {
        SinkException exception = new SinkException(errorCode, context + ": " + describe(e) + suffix, sanitized(e));
        SQLException next = e.getNextException();
        while (next != null) {
            exception.addSuppressed(sanitized(next));
            next = next.getNextException();
        }
        return exception;
    }

    /**
     * A copy of the failure fit for any log: its message is {@link #describeCopy} (no DETAIL, no
     * value the message or the context quotes), its SQLState and stack trace are the failure's, and
     * so, sanitized the same way, are its cause and suppressed exceptions. Debezium's engine and
     * Kafka Connect's worker log a failure's whole cause chain; pgjdbc's own message holds the
     * server's DETAIL and WHERE unless {@code logServerErrorDetail=false}, and even then the
     * message of a data error quotes the value.
     */
    public static SQLException sanitized(SQLException e)
    {
        return sanitized(e, 0);
    }

    private static SQLException sanitized(SQLException e, int depth)
    {
        if (e instanceof SanitizedSqlException) {
            return e;
        }
        SQLException copy = new SanitizedSqlException(e.getClass().getSimpleName() + ": " + describeCopy(e),
                e.getSQLState(), e.getErrorCode(), describe(e), column(e));
        copy.setStackTrace(e.getStackTrace());
        if (depth < 8) {
            if (e.getCause() instanceof SQLException cause && cause != e) {
                copy.initCause(sanitized(cause, depth + 1));
            }
            for (Throwable suppressed : e.getSuppressed()) {
                copy.addSuppressed(suppressed instanceof SQLException sql ? sanitized(sql, depth + 1) : suppressed);
            }
        }
        return copy;
    }

    /**
     * The column a failure names: the COPY context's ({@code COPY t, line 3, column b}) or the
     * server's COLUMN field (a NOT NULL violation); null when it names none.
     */
    @Nullable
    public static String column(SQLException e)
    {
        if (e instanceof SanitizedSqlException sanitized) {
            return sanitized.column;
        }
        String column = copyColumn(e);
        if (column == null && e instanceof PSQLException psql && psql.getServerErrorMessage() != null) {
            column = psql.getServerErrorMessage().getColumn();
        }
        return column;
    }

    /**
     * The message without values, then the SQLState:
     * {@code value too long for type character varying(8) [SQLState 22001]}.
     */
    public static String describe(SQLException e)
    {
        if (e instanceof SanitizedSqlException sanitized) {
            return sanitized.description;
        }
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
    public static long copyLine(ServerErrorMessage server)
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

    /**
     * Drops the input value PostgreSQL quotes in data errors such as
     * {@code invalid input syntax for type integer: "x"}.
     */
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

    /** An {@link SQLException} whose text was made fit for logs by {@link #sanitized}. */
    private static final class SanitizedSqlException
            extends SQLException
    {
        private final String description;
        @Nullable
        private final String column;

        SanitizedSqlException(String message, @Nullable String state, int vendorCode, String description,
                @Nullable String column)
        {
            super(message, state, vendorCode);
            this.description = description;
            this.column = column;
        }
    }
}
