package io.pgsink.connector.standalone.engine;

/** Where the standalone service may end a flush ({@code flush.boundary}). */
public enum FlushBoundary
{
    /**
     * Only between source transactions: every flush commits whole source transactions, across all
     * tables, so every state of the target is a committed state of the source. Uses Debezium's
     * transaction metadata ({@code provide.transaction.metadata}).
     */
    TRANSACTION,
    /**
     * At the end of each engine batch and whenever the buffer is full, which may be inside a source
     * transaction: the target can show one partly applied until the next flush.
     */
    BATCH,
}
