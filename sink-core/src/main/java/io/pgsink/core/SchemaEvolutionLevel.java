package io.pgsink.core;

/** {@code schema.evolution}: what the sink may change in the target's tables. */
public enum SchemaEvolutionLevel
{
    /** Nothing: target tables must exist with every source column. */
    NONE,
    /** Create missing tables and add new source columns. */
    ADD_COLUMNS,
}
