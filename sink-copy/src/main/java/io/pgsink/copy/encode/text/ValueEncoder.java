package io.pgsink.copy.encode.text;

import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;

/**
 * Writes one non-null value of one PostgreSQL type as one CSV field. Implementations are stateless
 * and thread-safe; {@link ValueEncoders#forType(String)} returns them, resolved once per column, so
 * that the per-row loop only indexes an array of encoders.
 *
 * <p>SQL NULL never reaches an encoder: the caller writes it with {@link CsvWriter#writeNull()}.
 * Every encoder accepts a {@link String} as the value's PostgreSQL text representation (the form
 * Debezium delivers intervals, ranges, network and geometric types, money... in) and writes it as
 * text; the server parses it.
 */
@FunctionalInterface
public interface ValueEncoder
{
    /**
     * Writes {@code value} as the next field of the current row.
     *
     * @throws ValueEncodingException when the value cannot be represented in the column's type; the
     *         row is then incomplete and must be dropped with {@link CsvWriter#discardRow()}
     */
    void encode(Object value, CsvWriter out);
}
