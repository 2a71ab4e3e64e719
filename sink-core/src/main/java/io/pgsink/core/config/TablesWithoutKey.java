package io.pgsink.core.config;

/** {@code tables.without.key}: what to do with a source table that has no primary key. */
public enum TablesWithoutKey
{
    /** Refuse it with an error. */
    FAIL,
    /** Copy its inserts straight into the target; refuse its updates and deletes. */
    APPEND_ONLY,
}
