package io.pgsink.copy.encode.binary;

import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.write.BinaryCopyWriter;
import io.pgsink.copy.write.ValueEncodingException;

/**
 * Writes one non-null value of one PostgreSQL type as one field of a binary COPY, in the type's
 * binary wire format: the binary counterpart of {@link ValueEncoder}, giving the target the same
 * value. Implementations are stateless singletons, resolved once per column by
 * {@link BinaryValueEncoders#forType(String)}.
 *
 * <p>A value the encoder cannot write exactly as the CSV path would have it read (a text form of a
 * typed value such as {@code "1 day"}, a class the type does not accept, a number the conversion
 * could round differently, a date the wire format cannot hold) is not {@link #accepts accepted}: the
 * caller then writes the whole COPY as CSV, where the server parses the text or the CSV encoder
 * refuses the value with its usual message.
 */
public interface BinaryValueEncoder
{
    /**
     * Whether {@link #encode} writes {@code value} (not null) as the value CSV would give the target. Cheap: a class
     * check and a range check.
     */
    boolean accepts(Object value);

    /**
     * Writes {@code value}, which {@link #accepts} accepted, as the next field of the current row.
     *
     * @throws ValueEncodingException for what CSV refuses as well (a NUL character in text,
     *         nanoseconds in a time), with the same message; the row must then be discarded
     */
    void encode(Object value, BinaryCopyWriter out);
}
