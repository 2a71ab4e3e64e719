package io.pgsink.merge.session;

import io.pgsink.core.config.SessionReplicationRole;
import io.pgsink.core.config.SinkConfig;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import java.util.Properties;

/**
 * Opens physical connections to the target: for the sink's connection pool (see
 * {@code TargetSession}), which calls it from its own threads, and for one-off checks. The
 * password goes to the driver only; it is never logged. Connections are named
 * {@code pgsink <sink name>} ({@code ApplicationName}) unless {@code target.jdbc.ApplicationName}
 * says otherwise, and open with {@code logServerErrorDetail=false} unless
 * {@code target.jdbc.logServerErrorDetail} says otherwise: pgjdbc then keeps the server's DETAIL
 * (which can quote a whole row) out of exception messages. Each connection gets
 * {@code target.session.replication.role} ({@link SessionReplicationRoles}) and
 * {@code target.toast.compression} ({@link ToastCompressions}).
 */
@FunctionalInterface
public interface TargetConnector
{
    Connection connect()
            throws SQLException;

    static TargetConnector fromConfig(SinkConfig config)
    {
        return fromConfig(config, config.sessionReplicationRole());
    }

    /**
     * Connections with {@code role} instead of the configured one: {@code pgsink check} connects as the server's
     * default and asks whether the configured role is allowed.
     */
    static TargetConnector fromConfig(SinkConfig config, SessionReplicationRole role)
    {
        return () -> {
            Properties properties = new Properties();
            for (Map.Entry<String, String> entry : config.targetJdbcProperties().entrySet()) {
                properties.setProperty(entry.getKey(), entry.getValue());
            }
            config.targetUser().ifPresent(user -> properties.setProperty("user", user));
            config.targetPassword().ifPresent(password -> properties.setProperty("password", password));
            properties.putIfAbsent("ApplicationName", "pgsink " + config.sinkName());
            // the server's DETAIL and WHERE quote row values: out of pgjdbc's exception messages
            properties.putIfAbsent("logServerErrorDetail", "false");
            Connection connection = DriverManager.getConnection(config.targetUrl(), properties);
            try {
                SessionReplicationRoles.apply(connection, role);
                ToastCompressions.apply(connection, config.toastCompression());
            }
            catch (SQLException e) {
                try {
                    connection.close();
                }
                catch (SQLException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            }
            return connection;
        };
    }
}
