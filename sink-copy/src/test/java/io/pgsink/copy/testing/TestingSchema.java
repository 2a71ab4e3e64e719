package io.pgsink.copy.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;

/**
 * A throwaway schema for one test class. {@link #connect()} returns connections whose
 * {@code search_path} is this schema; {@link #close()} drops it and everything in it.
 */
public final class TestingSchema
        implements AutoCloseable
{
    private final TestingPostgreSqlServer server;
    private final String name;

    TestingSchema(TestingPostgreSqlServer server, String name)
    {
        this.server = server;
        this.name = name;
    }

    /** The schema's name, lower case letters, digits and underscores only, so it needs no quoting. */
    public String name()
    {
        return name;
    }

    public TestingPostgreSqlServer server()
    {
        return server;
    }

    public Connection connect()
            throws SQLException
    {
        Properties properties = server.properties();
        properties.setProperty("currentSchema", name);
        return java.sql.DriverManager.getConnection(server.jdbcUrl(), properties);
    }

    /** Runs statements on a fresh connection in auto-commit mode. */
    public void execute(String... sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }

    /** Every row of {@code sql}, each column as text (NULL as null), on a fresh connection. */
    public List<List<String>> query(String sql)
            throws SQLException
    {
        try (Connection connection = connect()) {
            return Rows.query(connection, sql);
        }
    }

    @Override
    public void close()
            throws SQLException
    {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
        }
    }
}
