package io.pgsink.copy.write;

import java.sql.SQLException;

/**
 * What every COPY row writer offers, whatever the format ({@link CsvWriter} for CSV,
 * {@link BinaryCopyWriter} for binary): the fields pgsink writes itself (flags, masks, NULL), row
 * boundaries, and the mapping of the server's COPY line numbers back to rows. Values of a column's
 * type go through the format's encoders ({@link io.pgsink.copy.encode.text.ValueEncoder},
 * {@link io.pgsink.copy.encode.binary.BinaryValueEncoder}).
 *
 * <p>Not thread-safe: a writer belongs to the thread running one COPY.
 */
public interface CopyRowWriter
{
    /** Writes SQL NULL as the next field. */
    void writeNull();

    /** Writes a bool field. */
    void writeBoolean(boolean value);

    /**
     * Writes a text field (UTF-8).
     *
     * @throws ValueEncodingException for a NUL character (unless the format strips them) or an unpaired surrogate
     */
    void writeText(CharSequence value);

    /** Ends the row; the writer may hand its buffer over then. */
    void endRow()
            throws SQLException;

    /** Drops what was written of the current row, e.g. after a {@link ValueEncodingException}. */
    void discardRow();

    /** Hands over the rows still buffered; the current row must have been ended or discarded. */
    void finish()
            throws SQLException;

    /** The 1-based row, among the rows ended, that the server calls {@code line} in a COPY error context. */
    long rowOfCopyLine(long line);
}
