package io.pgsink.core;

/** {@code target.update.mode}: how a flush writes keys the target may already hold. */
public enum UpdateMode
{
    /**
     * One {@code MERGE} where the target allows it (PostgreSQL 15+, UPDATE granted, narrow rows); on
     * Greenplum 7 and Cloudberry an upsert of staged rows ({@code INSERT ... ON CONFLICT DO UPDATE})
     * under the same conditions, for heap tables; else {@link #DELETE_INSERT}.
     */
    AUTO,
    /** Every touched key is deleted, then its final row inserted. */
    DELETE_INSERT,
}
