package io.pgsink.merge.session;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.config.SessionReplicationRole;
import io.pgsink.core.config.SinkConfig;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/**
 * Sets {@code session_replication_role} on target connections ({@code target.session.replication.role})
 * and says whether the target user may set it. The parameter is superuser-only
 * ({@code PGC_SUSET}); PostgreSQL 15+ lets a superuser grant it
 * ({@code GRANT SET ON PARAMETER session_replication_role TO <user>}).
 */
public final class SessionReplicationRoles
{
    private static final String PRIVILEGE_ADVICE = "it needs a superuser, or on PostgreSQL 15+ GRANT SET ON PARAMETER "
            + "session_replication_role TO the target user";

    private SessionReplicationRoles() {}

    /**
     * Sets the role on a new connection; nothing for {@link SessionReplicationRole#ORIGIN}, the
     * server's default.
     *
     * @throws SQLException with SQLState 42501 naming the key when the user may not set it
     */
    public static void apply(Connection connection, SessionReplicationRole role)
            throws SQLException
    {
        switch (role) {
            case ORIGIN -> {
            }
            case REPLICA -> {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET session_replication_role = replica");
                }
                catch (SQLException e) {
                    if (SqlFailures.INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                        throw new SQLException(SinkConfig.TARGET_SESSION_REPLICATION_ROLE
                                + "=replica: the target user may not set session_replication_role: " + PRIVILEGE_ADVICE,
                                e.getSQLState(), e);
                    }
                    throw e;
                }
            }
        }
    }

    /**
     * Why the connection's user may not apply with {@code role}, or empty when it may (what
     * {@code pgsink check} reports).
     */
    public static Optional<String> problem(Connection connection, SessionReplicationRole role)
            throws SQLException
    {
        if (role == SessionReplicationRole.ORIGIN) {
            return Optional.empty();
        }
        boolean parameterPrivileges = connection.getMetaData().getDatabaseMajorVersion() >= 15;
        @Language("SQL")
        String query = parameterPrivileges
                ? "SELECT r.rolsuper OR pg_catalog.has_parameter_privilege('session_replication_role', 'SET') FROM "
                + "pg_catalog.pg_roles r WHERE r.rolname = current_user"
                : "SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user";
        try (PreparedStatement statement = connection.prepareStatement(query);
                ResultSet rows = statement.executeQuery()) {
            if (rows.next() && rows.getBoolean(1)) {
                return Optional.empty();
            }
        }
        return Optional.of(SinkConfig.TARGET_SESSION_REPLICATION_ROLE + "=replica, but the target user may not set "
                + "session_replication_role: " + PRIVILEGE_ADVICE);
    }
}
