package io.pgsink.copy.load;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.copy.write.BinaryCopyWriter;
import io.pgsink.copy.write.ChunkConsumer;
import io.pgsink.copy.write.CopyRowWriter;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import org.intellij.lang.annotations.Language;
import org.jetbrains.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * Streams CSV or binary rows into PostgreSQL with {@code COPY ... FROM STDIN}, through pgjdbc's
 * {@link CopyIn}: each chunk a {@link CsvWriter} or {@link BinaryCopyWriter} hands over is one {@code writeToCopy} call
 * (one CopyData message), and nothing is flushed per row.
 *
 * <p>A COPY either loads every row or none. On any failure, the body's included, the copy is
 * cancelled with {@code cancelCopy()}, never ended: {@code endCopy()} would commit the rows sent so
 * far (in auto-commit mode) or leave them in the transaction. After a failure inside a transaction,
 * the transaction is aborted and the caller must roll back; the connection stays usable.
 */
public final class CopyLoader
{
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
        return copyIn(connection, copySql, format, body, CopyListener.NONE);
    }

    /**
     * As {@link #copyIn(Connection, String, CopyFormat, CopyBody)}, telling {@code listener} the
     * size of every chunk sent.
     */
    public static long copyIn(Connection connection, @Language("SQL") String copySql, CopyFormat format, CopyBody body,
            CopyListener listener)
            throws SQLException
    {
        requireNonNull(format, "format is null");
        requireNonNull(body, "body is null");
        return copy(connection, copySql, output -> new CsvWriter(format, output), body::write, listener);
    }

    /**
     * As {@link #copyIn(Connection, String, CopyFormat, CopyBody, CopyListener)} for a
     * {@code COPY ... FROM STDIN (FORMAT binary)} statement (see {@link #binaryCopyStatement}),
     * whose rows {@code body} writes with a {@link BinaryCopyWriter}.
     *
     * @param nulHandling what to do with U+0000 in text values, as the CSV format would
     */
    public static long copyInBinary(Connection connection, @Language("SQL") String copySql,
            NulCharacterHandling nulHandling, BinaryCopyBody body, CopyListener listener)
            throws SQLException
    {
        requireNonNull(nulHandling, "nulHandling is null");
        requireNonNull(body, "body is null");
        return copy(connection, copySql, output -> new BinaryCopyWriter(nulHandling, output), body::write, listener);
    }

    private static <W extends CopyRowWriter> long copy(Connection connection, String copySql,
            Function<ChunkConsumer, W> writers, RowsBody<W> body, CopyListener listener)
            throws SQLException
    {
        requireNonNull(connection, "connection is null");
        requireNonNull(copySql, "copySql is null");
        requireNonNull(listener, "listener is null");
        CopyIn copy = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(copySql);
        CopyOutput output = new CopyOutput(copy, listener);
        W writer = null;
        boolean ending = false;
        try {
            writer = writers.apply(output);
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

    @FunctionalInterface
    private interface RowsBody<W>
    {
        void write(W writer)
                throws SQLException;
    }

    /** A rejection naming a COPY line becomes a {@link CopyRejectedException} naming the row. */
    private static PSQLException withRow(PSQLException e, CopyRowWriter writer)
    {
        ServerErrorMessage server = e.getServerErrorMessage();
        long line = server == null ? -1 : SqlFailures.copyLine(server);
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
        private final CopyListener listener;
        @Nullable
        private SQLException failure;

        CopyOutput(CopyIn copy, CopyListener listener)
        {
            this.copy = copy;
            this.listener = listener;
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
            listener.bytesSent(length);
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
        requireNonNull(format, "format is null");
        return columnList(qualifiedQuotedTable, columnNames).append(") FROM STDIN (FORMAT csv, DELIMITER ")
                .append(SqlIdentifiers.literal(String.valueOf(format.delimiter())))
                .append(", QUOTE ").append(SqlIdentifiers.literal(String.valueOf(format.quote())))
                .append(", ESCAPE ").append(SqlIdentifiers.literal(String.valueOf(format.escape())))
                .append(", NULL ").append(SqlIdentifiers.literal(format.nullString()))
                .append(')')
                .toString();
    }

    /** Returns {@code COPY table ("a", "b") FROM STDIN (FORMAT binary)}; arguments as for {@link #copyStatement}. */
    public static String binaryCopyStatement(String qualifiedQuotedTable, List<String> columnNames)
    {
        return columnList(qualifiedQuotedTable, columnNames).append(") FROM STDIN (FORMAT binary)").toString();
    }

    /** {@code COPY table ("a", "b"}, to be closed by the caller. */
    private static StringBuilder columnList(String qualifiedQuotedTable, List<String> columnNames)
    {
        requireNonNull(qualifiedQuotedTable, "qualifiedQuotedTable is null");
        requireNonNull(columnNames, "columnNames is null");
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
        return sql;
    }

    /**
     * Describes a failed COPY without row values: SQLState, the server's message and its context,
     * which names the COPY line and column ({@code COPY t, line 3, column b}); see
     * {@link SqlFailures#describeCopy}.
     */
    public static String describeCopyFailure(SQLException e)
    {
        requireNonNull(e, "e is null");
        return SqlFailures.describeCopy(e);
    }
}
