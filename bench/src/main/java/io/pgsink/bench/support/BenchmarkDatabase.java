package io.pgsink.bench.support;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.Properties;

import static java.util.Objects.requireNonNull;

/** The target the benchmark writes into: a JDBC URL and a schema of its own, dropped at the end. */
public final class BenchmarkDatabase
        implements AutoCloseable
{
    public final String url;
    public final String schema;

    private final boolean owner;

    public BenchmarkDatabase(String url, String schema)
            throws SQLException
    {
        this(url, schema, true);
        execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE", "CREATE SCHEMA " + schema);
    }

    private BenchmarkDatabase(String url, String schema, boolean owner)
    {
        this.url = requireNonNull(url, "url is null");
        this.schema = requireNonNull(schema, "schema is null");
        this.owner = owner;
    }

    /** The same schema reached through another URL (the round-trip counting proxy); closing it drops nothing. */
    public BenchmarkDatabase through(String otherUrl)
    {
        return new BenchmarkDatabase(otherUrl, schema, false);
    }

    public Connection connect(boolean rewriteBatchedInserts)
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

    /** The user named in the URL ({@code user=}), else {@code postgres}. */
    public String user()
    {
        return urlParameter("user").orElse("postgres");
    }

    /** The password named in the URL ({@code password=}), else empty. */
    public String password()
    {
        return urlParameter("password").orElse("");
    }

    private Optional<String> urlParameter(String name)
    {
        int query = url.indexOf('?');
        if (query < 0) {
            return Optional.empty();
        }
        for (String parameter : url.substring(query + 1).split("&")) {
            int equals = parameter.indexOf('=');
            if (equals > 0 && parameter.substring(0, equals).equals(name)) {
                return Optional.of(URLDecoder.decode(parameter.substring(equals + 1), StandardCharsets.UTF_8));
            }
        }
        return Optional.empty();
    }

    public void execute(String... sql)
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
        if (owner) {
            execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }
}
