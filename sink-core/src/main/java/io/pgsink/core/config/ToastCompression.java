package io.pgsink.core.config;

/**
 * How the values the sink's target connections write are compressed when the server TOASTs them
 * ({@code target.toast.compression}).
 */
public enum ToastCompression
{
    /**
     * lz4 where the server offers it (PostgreSQL 14+ built with lz4): the session's
     * {@code default_toast_compression} is set to {@code lz4}. Columns with a {@code COMPRESSION}
     * of their own keep it; the values read the same either way.
     */
    LZ4,
    /** The server's {@code default_toast_compression} (pglz unless configured otherwise). */
    SERVER_DEFAULT,
}
