package io.pgsink.core.config;

/** {@code target.dialect}: which kind of database the target is. */
public enum TargetDialect
{
    /** Detect it from {@code version()}. */
    AUTO,
    POSTGRESQL,
    /** Greenplum 6 or later, or Apache Cloudberry. */
    GREENPLUM,
}
