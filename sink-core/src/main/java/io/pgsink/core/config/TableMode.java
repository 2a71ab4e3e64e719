package io.pgsink.core.config;

/** {@code table.mode}: how changes of a table are written to its target table. */
public enum TableMode
{
    /** Merged by primary key: the target holds each key's latest row. */
    MERGE,
    /** Appended: every change becomes a row of its own, with the metadata columns (a change history). */
    HISTORY,
}
