package io.pgsink.copy;

import io.pgsink.core.CopyFormat;
import org.intellij.lang.annotations.Language;
import org.jetbrains.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * Streams CSV rows into PostgreSQL with {@code COPY ... FROM STDIN}, through pgjdbc's
 * {@link CopyIn}: each chunk a {@link CsvWriter} hands over is one {@code writeToCopy} call (one
 * CopyData message), and nothing is flushed per row.
 *
 * <p>A COPY either loads every row or none. On any failure, the body's included, the copy is
 * cancelled with {@code cancelCopy()}, never ended: {@code endCopy()} would commit the rows sent so
 * far (in auto-commit mode) or leave them in the transaction. After a failure inside a transaction,
 * the transaction is aborted and the caller must roll back; the connection stays usable.
 */
public final class CopyLoader
{
    /** The start of a COPY context line, {@code COPY t, line 3}. */
    private static final Pattern COPY_CONTEXT = Pattern.compile("^COPY .*?, line (\\d+)", Pattern.MULTILINE);
    private static final Pattern VALUE_OUT_OF_RANGE = Pattern.compile("value \".*\" is out of range for type (.*)", Pattern.DOTALL);
    private static final Pattern TRAILING_VALUE = Pattern.compile("(.*?): \".*\"", Pattern.DOTALL);

    private CopyLoader() {}

    /**
     * Runs {@code copySql} (a {@code COPY ... FROM STDIN} statement in {@code format}) and streams what
     * {@code body} writes.
     *
     * @return the number of rows the server loaded
     * @throws CopyRejectedException when the server rejects a row, naming the row
     * @throws SQLException when the server rejects the statement, or the connection fails. In every
     *         failure the COPY is cancelled unless the server ended it already (a failure to cancel
     *         is added as suppressed); exceptions thrown by {@code body} are rethrown as they are.
     */
    public static long copyIn(Connection connection, @Language("SQL") String copySql, CopyFormat format, CopyBody body)
            throws SQLException
    {
        requireNonNull(connection, "connection is null");
        requireNonNull(copySql, "copySql is null");
        requireNonNull(format, "format is null");
        requireNonNull(body, "body is null");
        CopyIn copy = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
        CopyOutput output = new CopyOutput(copy);
        CsvWriter writer = null;
        boolean ending = false;
        try {
            writer = new CsvWriter(format, output);
            body.write(writer);
            writer.finish();
            ending = true;
            return copy.endCopy();
        }
        catch (PSQLException e) {
            // only the server's answers to the data name COPY lines of this writer's rows
            PSQLException failure = writer != null && (ending || e == output.failure) ? withRow(e, writer) : e;
            cancel(copy, failure);
            throw failure;
        }
        catch (Throwable e) {
            cancel(copy, e);
            throw e;
        }
    }

    /** A rejection naming a COPY line becomes a {@link CopyRejectedException} naming the row. */
    private static PSQLException withRow(PSQLException e, CsvWriter writer)
    {
        ServerErrorMessage server = e.getServerErrorMessage();
        if (server == null || server.getWhere() == null) {
            return e;
        }
        Matcher matcher = COPY_CONTEXT.matcher(server.getWhere());
        if (!matcher.find()) {
            return e;
        }
        long line;
        try {
            line = Long.parseLong(matcher.group(1));
        }
        catch (NumberFormatException ignored) {
            return e;
        }
        if (line < 1) {
            return e;
        }
        return new CopyRejectedException(e, writer.rowOfCopyLine(line));
    }

    /** Sends chunks and remembers a failure to send, so that it can be told from the body's own failures. */
    private static final class CopyOutput
            implements ChunkConsumer
    {
        private final CopyIn copy;
        @Nullable
        private SQLException failure;

        CopyOutput(CopyIn copy)
        {
            this.copy = copy;
        }

        @Override
        public void accept(byte[] buffer, int offset, int length)
                throws SQLException
        {
            try {
                copy.writeToCopy(buffer, offset, length);
            }
            catch (SQLException e) {
                failure = e;
                throw e;
            }
        }
    }

    private static void cancel(CopyIn copy, Throwable failure)
    {
        try {
            // not active when the server already ended the copy, e.g. after rejecting the data
            if (copy.isActive()) {
                copy.cancelCopy();
            }
        }
        catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    /**
     * Returns {@code COPY table ("a", "b") FROM STDIN (FORMAT csv, DELIMITER ',', QUOTE '"', ESCAPE '"', NULL '')}.
     *
     * @param qualifiedQuotedTable the table, already quoted (see {@link SqlIdentifiers#qualified})
     * @param columnNames the columns in the order the rows are written, not quoted
     */
    public static String copyStatement(String qualifiedQuotedTable, List<String> columnNames, CopyFormat format)
    {
        requireNonNull(qualifiedQuotedTable, "qualifiedQuotedTable is null");
        requireNonNull(columnNames, "columnNames is null");
        requireNonNull(format, "format is null");
        if (columnNames.isEmpty()) {
            throw new IllegalArgumentException("COPY into " + qualifiedQuotedTable + " needs at least one column");
        }
        StringBuilder sql = new StringBuilder("COPY ").append(qualifiedQuotedTable).append(" (");
        for (int i = 0; i < columnNames.size(); i++) {
            if (i > 0) {
                sql.append(", ");
            }
            sql.append(SqlIdentifiers.quote(columnNames.get(i)));
        }
        return sql.append(") FROM STDIN (FORMAT csv, DELIMITER ").append(SqlIdentifiers.literal(String.valueOf(format.delimiter())))
                .append(", QUOTE ").append(SqlIdentifiers.literal(String.valueOf(format.quote())))
                .append(", ESCAPE ").append(SqlIdentifiers.literal(String.valueOf(format.escape())))
                .append(", NULL ").append(SqlIdentifiers.literal(format.nullString()))
                .append(')')
                .toString();
    }

    /**
     * Describes a failed COPY without row values: SQLState, the server's message and its context,
     * which names the COPY line and column ({@code COPY t, line 3, column b}). The server's DETAIL
     * is left out, and so is a value the message or the context quotes ({@code invalid input syntax
     * for type integer: "..."}, {@code column b: "..."}): row values may be personal data, and this
     * text ends up in logs and dead-letter tables.
     */
    public static String describeCopyFailure(SQLException e)
    {
        requireNonNull(e, "e is null");
        String state = e.getSQLState() == null ? "none" : e.getSQLState();
        if (!(e instanceof PSQLException psql) || psql.getServerErrorMessage() == null) {
            // raised by pgjdbc itself (I/O, protocol): its message holds no row values
            return "SQLState " + state + ": " + e.getMessage();
        }
        ServerErrorMessage server = psql.getServerErrorMessage();
        StringBuilder description = new StringBuilder("SQLState ").append(state).append(": ").append(withoutValue(String.valueOf(server.getMessage())));
        String where = server.getWhere();
        if (where != null && !where.isEmpty()) {
            description.append(" (").append(withoutValueInContext(where)).append(')');
        }
        return description.toString();
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
}
