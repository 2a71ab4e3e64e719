package io.pgsink.core.error;

/**
 * Category of a {@link SinkException}. Adapters decide on it: only {@link #TRANSIENT} is retried
 * (in Kafka Connect it becomes a {@code RetriableException}); everything else stops the sink or,
 * where the error policy allows, sends the offending row to the dead-letter destination.
 */
public enum ErrorCode
{
    /**
     * A configuration value is invalid or missing, or the server refused the sink's login, a
     * privilege or its database, or another writer with the same {@code sink.name} took over. An
     * operator has to act; retrying cannot help.
     */
    CONFIG,
    /** Source and target disagree on tables, columns, keys or types. */
    SCHEMA_MISMATCH,
    /** One value or row cannot be written (NUL character, value too long, constraint violation...). */
    DATA,
    /** The target was unreachable, restarted or cancelled the statement; the same batch may be retried. */
    TRANSIENT,
}
