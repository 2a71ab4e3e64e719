package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.demo.Quickstart;
import io.pgsink.copy.testing.Rows;
import io.pgsink.copy.testing.TestingPostgreSqlServer;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A throwaway database on the test server ({@link TestingPostgreSqlServer}), for tests that need a
 * Debezium source (replication slots and publications belong to a database) or a separate target.
 * {@link #close()} terminates the walsenders of this database's replication slots, drops the slots
 * and then the database, so no test leaves a slot holding WAL behind.
 */
public final class TestingDatabase
        implements AutoCloseable
{
    private final TestingPostgreSqlServer server;
    private final String name;
    private final String host;
    private final int port;
    private final Properties properties;

    private TestingDatabase(TestingPostgreSqlServer server, String name)
    {
        this.server = server;
        this.name = name;
        URI uri = URI.create(server.jdbcUrl().substring("jdbc:".length()));
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 5432 : uri.getPort();
        this.properties = server.properties();
        if (uri.getQuery() != null) {
            for (String parameter : uri.getQuery().split("&")) {
                int equals = parameter.indexOf('=');
                if (equals > 0) {
                    properties.putIfAbsent(parameter.substring(0, equals), parameter.substring(equals + 1));
                }
            }
        }
    }

    public static TestingDatabase create(String prefix)
            throws SQLException
    {
        return create(TestingPostgreSqlServer.source(), prefix);
    }

    /** A database on the test fixture's target server ({@link TestingPostgreSqlServer#target()}). */
    public static TestingDatabase createTarget(String prefix)
            throws SQLException
    {
        return create(TestingPostgreSqlServer.target(), prefix);
    }

    /** A database on {@code server}, such as a Greenplum coordinator to write to. */
    public static TestingDatabase create(TestingPostgreSqlServer server, String prefix)
            throws SQLException
    {
        String name = randomName(prefix);
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + name);
        }
        return new TestingDatabase(server, name);
    }

    public static String randomName(String prefix)
    {
        return (prefix + "_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36)).toLowerCase(Locale.ROOT);
    }

    public String name()
    {
        return name;
    }

    public String host()
    {
        return host;
    }

    public int port()
    {
        return port;
    }

    public String user()
    {
        return properties.getProperty("user", "postgres");
    }

    public String password()
    {
        return properties.getProperty("password");
    }

    public String jdbcUrl()
    {
        return "jdbc:postgresql://" + host + ":" + port + "/" + name;
    }

    public Connection connect()
            throws SQLException
    {
        Properties connectionProperties = new Properties();
        connectionProperties.putAll(properties);
        return DriverManager.getConnection(jdbcUrl(), connectionProperties);
    }

    public void execute(String... sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }

    /** Every row of {@code sql}, each column as text (NULL as null). */
    public List<List<String>> query(String sql)
            throws SQLException
    {
        try (Connection connection = connect()) {
            return Rows.query(connection, sql);
        }
    }

    /** The {@code source.database.*} keys that point Debezium at this database. */
    public Map<String, String> sourceProperties()
    {
        Map<String, String> source = new HashMap<>();
        source.put("source.database.hostname", host);
        source.put("source.database.port", Integer.toString(port));
        source.put("source.database.user", user());
        if (password() != null) {
            source.put("source.database.password", password());
        }
        source.put("source.database.dbname", name);
        return source;
    }

    /** The {@code target.*} keys that point the sink at this database. */
    public Map<String, String> targetProperties()
    {
        Map<String, String> target = new HashMap<>();
        target.put("target.url", jdbcUrl());
        target.put("target.user", user());
        if (password() != null) {
            target.put("target.password", password());
        }
        return target;
    }

    /**
     * The configuration of a service streaming {@code includeList} of this database into {@code target}:
     * a filtered publication, a sink named after {@code sinkPrefix}, 100 ms flushes, {@code /metrics} and
     * {@code /health} on a free port of 127.0.0.1; a mutable map, for the test's own keys.
     */
    Map<String, String> serviceProperties(TestingDatabase target, String includeList, String sinkPrefix)
    {
        Map<String, String> properties = new HashMap<>(sourceProperties());
        properties.putAll(target.targetProperties());
        properties.put("source.table.include.list", includeList);
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", randomName(sinkPrefix));
        properties.put("flush.interval.ms", "100");
        properties.put("http.port", "0");
        properties.put("http.host", "127.0.0.1");
        // not "pgsink ...": other modules' tests count connections by that application name
        properties.put("target.jdbc.ApplicationName", "pgsink-connector-it");
        return properties;
    }

    /** Names of replication slots of this database. */
    public List<String> replicationSlots()
            throws SQLException
    {
        List<String> slots = new ArrayList<>();
        try (Connection connection = server.connect(); PreparedStatement statement = connection.prepareStatement("SELECT slot_name FROM pg_replication_slots WHERE database = ?")) {
            statement.setString(1, name);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    slots.add(rows.getString(1));
                }
            }
        }
        return slots;
    }

    @Override
    public void close()
            throws SQLException
    {
        List<String> slots = replicationSlots();
        if (!slots.isEmpty()) {
            // a logical slot can only be dropped from its own database
            try (Connection connection = connect()) {
                for (String slot : slots) {
                    Quickstart.dropSlot(connection, slot);
                }
            }
        }
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            if (connection.getMetaData().getDatabaseMajorVersion() >= 13) {
                statement.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
                return;
            }
            // Greenplum 6/7 (PostgreSQL 9.4/12 based) lack FORCE: end the database's sessions, whose
            // backends exit a moment later, and drop it once they are gone
            for (int attempt = 1; ; attempt++) {
                statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name + "' AND pid <> pg_backend_pid()");
                try {
                    statement.execute("DROP DATABASE IF EXISTS " + name);
                    return;
                }
                catch (SQLException e) {
                    // 55006: object in use
                    if (!"55006".equals(e.getSQLState()) || attempt == 100) {
                        throw e;
                    }
                }
                try {
                    Thread.sleep(100);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLException("interrupted while dropping database " + name, e);
                }
            }
        }
    }
}
