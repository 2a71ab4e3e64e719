package io.pgsink.merge;

import io.pgsink.core.SinkConfig;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Map;
import java.util.Properties;

/** Opens connections to the target. The password goes to the driver only; it is never logged. */
@FunctionalInterface
public interface TargetConnector
{
    Connection connect()
            throws SQLException;

    static TargetConnector fromConfig(SinkConfig config)
    {
        return () -> {
            Properties properties = new Properties();
            for (Map.Entry<String, String> entry : config.targetJdbcProperties().entrySet()) {
                properties.setProperty(entry.getKey(), entry.getValue());
            }
            config.targetUser().ifPresent(user -> properties.setProperty("user", user));
            config.targetPassword().ifPresent(password -> properties.setProperty("password", password));
            properties.putIfAbsent("ApplicationName", "pgsink " + config.sinkName());
            return DriverManager.getConnection(config.targetUrl(), properties);
        };
    }
}
