package io.pgsink.merge.session;

import org.jetbrains.annotations.Nullable;

import javax.sql.DataSource;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;

import static java.util.Objects.requireNonNull;

/**
 * The {@link TargetConnector} as the {@link DataSource} HikariCP opens its physical connections
 * with, so that the pool validates, times out and evicts connections while pgjdbc's own settings
 * ({@code connectTimeout}, {@code socketTimeout}, TLS, from {@code target.jdbc.*}) stay as the user
 * set them. User and password come from the connector, never from the pool; {@link #toString()}
 * names no URL, since HikariCP logs its configuration and a URL may hold a password.
 */
final class TargetDataSource
        implements DataSource
{
    private final TargetConnector connector;
    private volatile int loginTimeoutSeconds;

    TargetDataSource(TargetConnector connector)
    {
        this.connector = requireNonNull(connector, "connector is null");
    }

    @Override
    public Connection getConnection()
            throws SQLException
    {
        return connector.connect();
    }

    @Override
    public Connection getConnection(String username, String password)
            throws SQLException
    {
        throw new SQLFeatureNotSupportedException("The target's user and password come from the sink's configuration");
    }

    @Override
    @Nullable
    public PrintWriter getLogWriter()
    {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    /** Kept for {@link #getLoginTimeout()} only: pgjdbc's {@code connectTimeout} bounds a connection attempt. */
    @Override
    public void setLoginTimeout(int seconds)
    {
        loginTimeoutSeconds = seconds;
    }

    @Override
    public int getLoginTimeout()
    {
        return loginTimeoutSeconds;
    }

    @Override
    public Logger getParentLogger()
            throws SQLFeatureNotSupportedException
    {
        throw new SQLFeatureNotSupportedException("pgsink logs with slf4j");
    }

    @Override
    public <T> T unwrap(Class<T> type)
            throws SQLException
    {
        if (type.isInstance(this)) {
            return type.cast(this);
        }
        throw new SQLException("Not a wrapper of " + type.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> type)
    {
        return type.isInstance(this);
    }

    @Override
    public String toString()
    {
        return "pgsink target connector";
    }
}
