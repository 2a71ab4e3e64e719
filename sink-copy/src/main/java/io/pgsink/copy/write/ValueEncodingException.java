package io.pgsink.copy.write;

/**
 * A value cannot be written as the PostgreSQL type of its column: a NUL character in text, an
 * unpaired surrogate, nanosecond precision, a Java class the type does not accept, a number out of
 * range.
 *
 * <p>The message is only the reason, never the value: values can be personal data and messages end
 * up in logs. The caller knows table, key and column, and wraps this into a
 * {@link io.pgsink.core.error.SinkException} with {@link io.pgsink.core.error.ErrorCode#DATA} naming them.
 * After this exception the row being written is incomplete; {@link CsvWriter#discardRow()} drops it.
 */
public class ValueEncodingException
        extends RuntimeException
{
    public ValueEncodingException(String reason)
    {
        super(reason);
    }
}
