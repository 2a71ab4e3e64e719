package io.pgsink.core.change;

/**
 * Marks a column whose value the source did not send because it did not change: PostgreSQL does not
 * log unchanged TOASTed values, so Debezium sends a placeholder for them. Adapters replace the
 * placeholder with {@link #INSTANCE}; the buffer fills it from an earlier image of the same key, and
 * the flush fills what is left from the current target row. It is never written to the target.
 */
public enum UnavailableValue
{
    INSTANCE;

    @Override
    public String toString()
    {
        return "<unavailable>";
    }
}
