package io.pgsink.copy.write;

import java.sql.SQLException;
import java.util.Arrays;

import static java.util.Objects.requireNonNull;

/**
 * The byte buffer a COPY row writer ({@link CsvWriter}, {@link BinaryCopyWriter}) encodes into, and
 * its hand-over to a {@link ChunkConsumer} in chunks of whole rows.
 *
 * <p>The writers encode straight into {@link #bytes} at {@link #position}: both are fields, not
 * accessors, so that an encoding loop can copy them into locals, write, and store the position back,
 * as it would with fields of its own. Before writing, a writer makes room with
 * {@link #ensureRoom(long)}, which may replace {@link #bytes} with a larger copy; a local copy of
 * the array is stale after that call.
 *
 * <p>Rows: {@link #endRow()} marks the end of a whole row and hands the buffer over when it holds at
 * least the chunk size, never in the middle of a row. So the buffer holds at most a chunk plus the
 * largest row, {@link #discardRow()} can always drop a half-written row, and after one unusually
 * large row the buffer shrinks back.
 *
 * <p>Not thread-safe: it belongs to its writer, and so to the thread running one COPY.
 */
final class CopyBuffer
{
    private static final int MAX_BUFFER_BYTES = Integer.MAX_VALUE - 16;
    private static final int MAX_INITIAL_BUFFER_BYTES = 1 << 20;

    private final ChunkConsumer output;
    private final int chunkBytes;
    private final int initialBufferBytes;
    private final long shrinkAboveBytes;

    /** The encoded bytes; replaced (grown or shrunk) by {@link #ensureRoom} and {@link #endRow()}. */
    byte[] bytes;
    /** Where the next byte goes. */
    int position;
    private int rowStart;
    private long bytesHandedOver;

    /**
     * @param chunkBytes the buffer is handed to {@code output} when a row ends and it holds at least this many bytes
     * @param header bytes the stream starts with, buffered as if they were an ended row (empty for none)
     */
    CopyBuffer(ChunkConsumer output, int chunkBytes, byte[] header)
    {
        this.output = requireNonNull(output, "output is null");
        requireNonNull(header, "header is null");
        if (chunkBytes < 1) {
            throw new IllegalArgumentException("chunkBytes must be positive, got " + chunkBytes);
        }
        this.chunkBytes = chunkBytes;
        this.initialBufferBytes = (int) Math.min(chunkBytes + 1024L, MAX_INITIAL_BUFFER_BYTES);
        this.shrinkAboveBytes = Math.max(4L * chunkBytes, 4L * MAX_INITIAL_BUFFER_BYTES);
        this.bytes = new byte[Math.max(initialBufferBytes, header.length)];
        System.arraycopy(header, 0, bytes, 0, header.length);
        position = header.length;
        rowStart = position;
    }

    /**
     * Makes room for {@code count} more bytes after {@link #position}.
     *
     * @throws ValueEncodingException when the row would not fit in a 2 GiB buffer
     */
    void ensureRoom(long count)
    {
        long required = position + count;
        if (required > bytes.length) {
            grow(required);
        }
    }

    /** Writes {@code value} at the position. */
    void append(byte[] value)
    {
        ensureRoom(value.length);
        System.arraycopy(value, 0, bytes, position, value.length);
        position += value.length;
    }

    /** Where the current row starts. */
    int rowStart()
    {
        return rowStart;
    }

    /** Whether bytes were written since the last row ended (or was discarded). */
    boolean inRow()
    {
        return position != rowStart;
    }

    /** Ends the row at the position; hands the buffer over when it then holds at least the chunk size. */
    void endRow()
            throws SQLException
    {
        rowStart = position;
        if (position >= chunkBytes) {
            handOver();
        }
    }

    /** Drops what was written since the last row ended. */
    void discardRow()
    {
        position = rowStart;
    }

    /** Hands over the ended rows still buffered; the current row must have been ended or discarded. */
    void flush()
            throws SQLException
    {
        if (inRow()) {
            throw new IllegalStateException("Row not ended: call endRow() or discardRow() before finish()");
        }
        if (position > 0) {
            handOver();
        }
    }

    /** Bytes of the rows ended so far, handed over or still buffered. */
    long bytesWritten()
    {
        return bytesHandedOver + rowStart;
    }

    private void handOver()
            throws SQLException
    {
        output.accept(bytes, 0, position);
        bytesHandedOver += position;
        position = 0;
        rowStart = 0;
        // one huge row must not pin its buffer for the rest of the COPY
        if (bytes.length > shrinkAboveBytes) {
            bytes = new byte[initialBufferBytes];
        }
    }

    /** Out of the inlined fast path of {@link #ensureRoom}: rare, and large. */
    private void grow(long required)
    {
        if (required > MAX_BUFFER_BYTES) {
            throw new ValueEncodingException("row does not fit in a 2 GiB buffer");
        }
        bytes = Arrays.copyOf(bytes, (int) Math.min(Math.max(required, 2L * bytes.length), MAX_BUFFER_BYTES));
    }
}
