package io.pgsink.core.config;

/**
 * The {@code session_replication_role} the sink applies changes with ({@code target.session.replication.role}).
 */
public enum SessionReplicationRole
{
    /** The server's default: triggers and rules fire, foreign keys are checked. */
    ORIGIN,
    /**
     * As a replica applies changes: ordinary triggers and rules do not fire (only those enabled
     * {@code ALWAYS} or {@code REPLICA}), and so foreign keys, which are triggers, are not checked.
     * Needs a superuser, or on PostgreSQL 15+ {@code GRANT SET ON PARAMETER session_replication_role}.
     */
    REPLICA,
}
