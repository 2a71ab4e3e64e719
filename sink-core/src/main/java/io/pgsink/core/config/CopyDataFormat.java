package io.pgsink.core.config;

/**
 * {@code copy.format}: how a flush's rows travel in {@code COPY ... FROM STDIN}. The CSV dialect
 * itself (delimiter, quote...) is {@link CopyFormat}.
 */
public enum CopyDataFormat
{
    /** {@code FORMAT csv}: every value as text, parsed by the server with the column type's input function. */
    CSV,
    /**
     * {@code FORMAT binary}: every value in its column type's binary wire format, read by the type's
     * receive function. A COPY whose columns or values have no binary form pgsink writes falls back
     * to CSV, so the target ends up with the same values either way.
     */
    BINARY,
}
