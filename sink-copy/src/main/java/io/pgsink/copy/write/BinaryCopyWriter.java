package io.pgsink.copy.write;

import io.pgsink.core.config.NulCharacterHandling;

import java.nio.ByteBuffer;
import java.sql.SQLException;

import static java.util.Objects.requireNonNull;

/**
 * Encodes rows in the format {@code COPY ... FROM STDIN (FORMAT binary)} reads, straight into one
 * reusable byte buffer, handed to a {@link ChunkConsumer} in chunks of whole rows, as
 * {@link CsvWriter} does for CSV: the {@code PGCOPY} signature, flags and header extension once;
 * per row the number of fields (int16), then per field its length (int32, -1 for NULL) and its bytes
 * in the column type's binary wire format (network byte order); after the last row the trailer
 * (int16 -1).
 *
 * <p>The typed {@code write...} methods write one whole field each; values composed of pieces (a
 * numeric's digits) use {@link #beginField()}, {@code append...} and {@link #endField()}, which
 * fills in the length. Which Java values become which bytes for a column type is the encoders' job
 * ({@link io.pgsink.copy.encode.binary.BinaryValueEncoders}).
 *
 * <p>Errors, memory and row numbers as in {@link CsvWriter}: a value that cannot be encoded throws
 * {@link ValueEncodingException} and {@link #discardRow()} drops the half-written row; the buffer
 * (the same {@link CopyBuffer}) is handed over only at row boundaries; the server numbers binary
 * COPY "lines" by row, so {@link #rowOfCopyLine(long)} is the identity.
 *
 * <p>Not thread-safe: a writer belongs to the thread running one COPY.
 */
public final class BinaryCopyWriter
        implements CopyRowWriter
{
    private static final byte[] HEADER = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xFF, '\r', '\n',
            0, 0, 0, 0, 0, 0, 0, 0, 0};

    private final CopyBuffer out;
    private final boolean stripNul;

    private int fieldsInRow;
    /** Where the length of the field being composed goes, or -1. */
    private int fieldStart = -1;
    private long rows;

    public BinaryCopyWriter(NulCharacterHandling nulHandling, ChunkConsumer output)
    {
        this(nulHandling, output, CsvWriter.DEFAULT_CHUNK_BYTES);
    }

    /**
     * @param nulHandling what to do with U+0000 in text values, as in CSV
     * @param chunkBytes the buffer is handed to {@code output} when a row ends and it holds at least this many bytes
     */
    public BinaryCopyWriter(NulCharacterHandling nulHandling, ChunkConsumer output, int chunkBytes)
    {
        this.stripNul = requireNonNull(nulHandling, "nulHandling is null") == NulCharacterHandling.STRIP;
        this.out = new CopyBuffer(output, chunkBytes, HEADER);
    }

    @Override
    public void writeNull()
    {
        startField(0);
        putInt(-1);
    }

    @Override
    public void writeBoolean(boolean value)
    {
        startField(1);
        putInt(1);
        out.bytes[out.position++] = (byte) (value ? 1 : 0);
    }

    public void writeShort(short value)
    {
        startField(2);
        putInt(2);
        putShort(value);
    }

    public void writeInt(int value)
    {
        startField(4);
        putInt(4);
        putInt(value);
    }

    public void writeLong(long value)
    {
        startField(8);
        putInt(8);
        putLong(value);
    }

    public void writeFloat(float value)
    {
        writeInt(Float.floatToIntBits(value));
    }

    public void writeDouble(double value)
    {
        writeLong(Double.doubleToLongBits(value));
    }

    /** A uuid: its 16 bytes, most significant first. */
    public void writeUuid(long mostSignificant, long leastSignificant)
    {
        startField(16);
        putInt(16);
        putLong(mostSignificant);
        putLong(leastSignificant);
    }

    /** A timetz: microseconds of the day, then the zone in seconds west of UTC (PostgreSQL's sign). */
    public void writeTimeWithZone(long micros, int secondsWestOfUtc)
    {
        startField(12);
        putInt(12);
        putLong(micros);
        putInt(secondsWestOfUtc);
    }

    public void writeBytes(byte[] value, int offset, int length)
    {
        requireNonNull(value, "value is null");
        if (offset < 0 || length < 0 || offset > value.length - length) {
            throw new IndexOutOfBoundsException("offset " + offset + " and length " + length + " do not fit in "
                    + value.length + " bytes");
        }
        startField(length);
        putInt(length);
        System.arraycopy(value, offset, out.bytes, out.position, length);
        out.position += length;
    }

    /** The bytes between the buffer's position and limit, without moving its position. */
    public void writeBytes(ByteBuffer value)
    {
        int length = value.remaining();
        startField(length);
        putInt(length);
        value.duplicate().get(out.bytes, out.position, length);
        out.position += length;
    }

    @Override
    public void writeText(CharSequence value)
    {
        writeText(value, false);
    }

    /** A jsonb: the format version 1, then the JSON text. */
    public void writeJsonb(CharSequence value)
    {
        writeText(value, true);
    }

    /** Starts a field composed of {@code append...} pieces; {@link #endField()} writes its length. */
    public void beginField()
    {
        startField(0);
        fieldStart = out.position;
        out.position += 4;
    }

    public void appendShort(int value)
    {
        checkInField();
        out.ensureRoom(2);
        putShort(value);
    }

    public void endField()
    {
        checkInField();
        putIntAt(fieldStart, out.position - fieldStart - 4);
        fieldStart = -1;
    }

    @Override
    public void endRow()
            throws SQLException
    {
        checkNotInField();
        if (fieldsInRow == 0) {
            throw new IllegalStateException("A binary COPY row needs at least one field");
        }
        putShortAt(out.rowStart(), fieldsInRow);
        rows++;
        fieldsInRow = 0;
        out.endRow();
    }

    @Override
    public void discardRow()
    {
        out.discardRow();
        fieldsInRow = 0;
        fieldStart = -1;
    }

    /** Writes the trailer and hands over what is buffered. The current row must have been ended or discarded. */
    @Override
    public void finish()
            throws SQLException
    {
        checkNotInField();
        if (fieldsInRow != 0) {
            throw new IllegalStateException("Row not ended: call endRow() or discardRow() before finish()");
        }
        out.ensureRoom(2);
        putShort(-1);
        // the trailer ends the stream as a row would, and goes with the last chunk
        out.endRow();
        out.flush();
    }

    /** Bytes of the rows ended so far (and of the header), handed over or still buffered. */
    public long bytesWritten()
    {
        return out.bytesWritten();
    }

    /** Rows ended so far (discarded rows do not count). */
    public long rowsWritten()
    {
        return rows;
    }

    /** The server counts binary rows as COPY lines, one each. */
    @Override
    public long rowOfCopyLine(long line)
    {
        if (line < 1) {
            throw new IllegalArgumentException("COPY lines start at 1, got " + line);
        }
        return line;
    }

    /**
     * One pass: encodes UTF-8 into room for the worst case (three bytes per char), checking for NUL
     * characters and unpaired surrogates as CSV does, then fills in the length.
     */
    private void writeText(CharSequence value, boolean jsonb)
    {
        requireNonNull(value, "value is null");
        int length = value.length();
        startField(3L * length + 1);
        int lengthAt = out.position;
        byte[] buffer = out.bytes;
        int position = lengthAt + 4;
        if (jsonb) {
            buffer[position++] = 1;
        }
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < 0x80) {
                if (c == 0) {
                    if (!stripNul) {
                        throw CsvWriter.nulCharacter(i);
                    }
                    continue;
                }
                buffer[position++] = (byte) c;
            }
            else if (c < 0x800) {
                buffer[position++] = (byte) (0xC0 | (c >> 6));
                buffer[position++] = (byte) (0x80 | (c & 0x3F));
            }
            else if (!Character.isSurrogate(c)) {
                buffer[position++] = (byte) (0xE0 | (c >> 12));
                buffer[position++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                buffer[position++] = (byte) (0x80 | (c & 0x3F));
            }
            else {
                if (!Character.isHighSurrogate(c) || i + 1 >= length
                        || !Character.isLowSurrogate(value.charAt(i + 1))) {
                    throw CsvWriter.unpairedSurrogate(c, i);
                }
                int codePoint = Character.toCodePoint(c, value.charAt(++i));
                buffer[position++] = (byte) (0xF0 | (codePoint >> 18));
                buffer[position++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
                buffer[position++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
                buffer[position++] = (byte) (0x80 | (codePoint & 0x3F));
            }
        }
        putIntAt(lengthAt, position - lengthAt - 4);
        out.position = position;
    }

    /** Starts a row when none is, counts the field, and makes room for its length and {@code bytes}. */
    private void startField(long bytes)
    {
        checkNotInField();
        if (fieldsInRow == 0) {
            out.ensureRoom(2L + 4 + bytes);
            out.position += 2;
        }
        else {
            out.ensureRoom(4L + bytes);
        }
        fieldsInRow++;
    }

    private void putShort(int value)
    {
        putShortAt(out.position, value);
        out.position += 2;
    }

    private void putShortAt(int at, int value)
    {
        byte[] buffer = out.bytes;
        buffer[at] = (byte) (value >>> 8);
        buffer[at + 1] = (byte) value;
    }

    private void putInt(int value)
    {
        putIntAt(out.position, value);
        out.position += 4;
    }

    private void putIntAt(int at, int value)
    {
        byte[] buffer = out.bytes;
        buffer[at] = (byte) (value >>> 24);
        buffer[at + 1] = (byte) (value >>> 16);
        buffer[at + 2] = (byte) (value >>> 8);
        buffer[at + 3] = (byte) value;
    }

    private void putLong(long value)
    {
        int position = out.position;
        putIntAt(position, (int) (value >>> 32));
        putIntAt(position + 4, (int) value);
        out.position = position + 8;
    }

    private void checkInField()
    {
        if (fieldStart < 0) {
            throw new IllegalStateException("append called outside beginField()/endField()");
        }
    }

    private void checkNotInField()
    {
        if (fieldStart >= 0) {
            throw new IllegalStateException("Field not ended: call endField() first");
        }
    }
}
