package io.pgsink.core.config;

/** {@code target.update.mode}: how a flush writes keys the target may already hold. */
public enum UpdateMode
{
    /**
     * One {@code MERGE} where the target allows it (PostgreSQL 15+, UPDATE granted, narrow rows); on
     * Greenplum 7 and Cloudberry an upsert of staged rows ({@code INSERT ... ON CONFLICT DO UPDATE})
     * under the same conditions, for heap tables; else {@link #DELETE_INSERT}. A table with a unique
     * index or exclusion constraint beyond its primary key (not {@code DEFERRABLE}, not holding every
     * key column) is always deleted and inserted: an update in place checks such an index row by
     * row, so a source transaction that swaps unique values between keys would fail.
     */
    AUTO,
    /** Every touched key is deleted, then its final row inserted. */
    DELETE_INSERT,
}
