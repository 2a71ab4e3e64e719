package io.pgsink.copy.load;

import org.intellij.lang.annotations.Language;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;
import org.postgresql.copy.CopyOut;

import java.sql.Connection;
import java.sql.SQLException;

import static java.util.Objects.requireNonNull;

/**
 * Pipes the output of a {@code COPY ... TO STDOUT} on one connection into a
 * {@code COPY ... FROM STDIN} on another, as bytes: no value is parsed or encoded in Java. Both
 * statements must use the same format ({@code text}, {@code csv} or {@code binary}) and column
 * order; the caller checks that the types agree (binary needs identical types).
 *
 * <p>pgjdbc hands each CopyData message it receives (one row, in text and csv format) over as a new
 * {@code byte[]}; this class copies those into one reused buffer and sends the buffer when it is
 * full, so the target receives large CopyData messages instead of one per row. A binary COPY's
 * header and trailer pass through unchanged, so the byte stream is valid for the target as it was
 * produced by the source.
 *
 * <p>On any failure both COPYs are cancelled (neither is ended): the target loads every row of the
 * source's COPY or none. Not thread-safe; one pipe per pair of connections at a time.
 */
public final class CopyPipe
{
    /** Large enough that per-message overhead vanishes, small enough to stay in the CPU cache. */
    static final int BUFFER_BYTES = 256 * 1024;

    private final byte[] buffer;

    public CopyPipe()
    {
        this(BUFFER_BYTES);
    }

    CopyPipe(int bufferBytes)
    {
        this.buffer = new byte[bufferBytes];
    }

    /** What one pipe moved. */
    public record Result(long rows, long bytes) {}

    /**
     * Runs {@code copyOutSql} on {@code source} and {@code copyInSql} on {@code target}, streaming
     * every byte from one into the other.
     *
     * @param listener told the size of each chunk sent to the target
     * @return the rows the target loaded and the bytes sent
     * @throws SQLException when either side fails; both COPYs are cancelled, the target's transaction
     *         (if any) is aborted and must be rolled back
     */
    public Result pipe(Connection source, @Language("SQL") String copyOutSql, Connection target,
            @Language("SQL") String copyInSql, CopyListener listener)
            throws SQLException
    {
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        requireNonNull(listener, "listener is null");
        CopyIn in = target.unwrap(PGConnection.class).getCopyAPI()
                .copyIn(requireNonNull(copyInSql, "copyInSql is null"));
        CopyOut out;
        try {
            out = source.unwrap(PGConnection.class).getCopyAPI()
                    .copyOut(requireNonNull(copyOutSql, "copyOutSql is null"));
        }
        catch (SQLException | RuntimeException e) {
            cancel(in, e);
            throw e;
        }
        long bytes = 0;
        int filled = 0;
        try {
            byte[] row;
            while ((row = out.readFromCopy()) != null) {
                if (filled + row.length > buffer.length) {
                    if (filled > 0) {
                        in.writeToCopy(buffer, 0, filled);
                        listener.bytesSent(filled);
                        bytes += filled;
                        filled = 0;
                    }
                    if (row.length > buffer.length) {
                        // a row larger than the buffer (TOAST-sized values) goes out as it is
                        in.writeToCopy(row, 0, row.length);
                        listener.bytesSent(row.length);
                        bytes += row.length;
                        continue;
                    }
                }
                System.arraycopy(row, 0, buffer, filled, row.length);
                filled += row.length;
            }
            if (filled > 0) {
                in.writeToCopy(buffer, 0, filled);
                listener.bytesSent(filled);
                bytes += filled;
            }
            long rows = in.endCopy();
            return new Result(rows, bytes);
        }
        catch (SQLException | RuntimeException e) {
            cancel(out, e);
            cancel(in, e);
            throw e;
        }
    }

    private static void cancel(org.postgresql.copy.CopyOperation copy, Throwable failure)
    {
        if (!copy.isActive()) {
            return;
        }
        try {
            copy.cancelCopy();
        }
        catch (SQLException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }
}
