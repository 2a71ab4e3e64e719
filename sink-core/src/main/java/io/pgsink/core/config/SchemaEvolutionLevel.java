package io.pgsink.core.config;

/** {@code schema.evolution}: what the sink may change in the target's tables. */
public enum SchemaEvolutionLevel
{
    /** Nothing: target tables must exist with every source column. */
    NONE,
    /** Create missing tables and add new source columns. */
    ADD_COLUMNS,
    /**
     * Also change a target column's type to its source type where that loses nothing (integer and
     * float widths, longer varchar or text, numeric with more digits), and drop a NOT NULL the
     * source column lost.
     */
    ADD_COLUMNS_AND_WIDEN,
}
