package io.pgsink.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/** The target the benchmark writes into: a JDBC URL and a schema of its own, dropped at the end. */
final class BenchmarkDatabase
        implements AutoCloseable
{
    final String url;
    final String schema;

    BenchmarkDatabase(String url, String schema)
            throws SQLException
    {
        this.url = url;
        this.schema = schema;
        execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE", "CREATE SCHEMA " + schema);
    }

    Connection connect(boolean rewriteBatchedInserts)
            throws SQLException
    {
        Properties properties = new Properties();
        properties.setProperty("currentSchema", schema);
        properties.setProperty("ApplicationName", "pgsink-bench");
        if (rewriteBatchedInserts) {
            properties.setProperty("reWriteBatchedInserts", "true");
        }
        return DriverManager.getConnection(url, properties);
    }

    void execute(String... sql)
            throws SQLException
    {
        try (Connection connection = connect(false); Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }

    @Override
    public void close()
            throws SQLException
    {
        execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
}
