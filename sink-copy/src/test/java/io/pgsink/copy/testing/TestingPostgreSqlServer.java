package io.pgsink.copy.testing;

import io.pgsink.embedded.EmbeddedPostgres;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.PostgreSQLContainer;

import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The PostgreSQL every integration test talks to, one per test JVM, in this order:
 * <ol>
 * <li>the server at the JDBC URL in the environment variable {@value #URL_ENVIRONMENT_VARIABLE},
 *     when it is set (it needs {@code wal_level=logical} for the Debezium-based tests);</li>
 * <li>a Testcontainers PostgreSQL 15 with {@code wal_level=logical}, where a Docker engine
 *     answers;</li>
 * <li>otherwise an {@link EmbeddedPostgres} (the quickstart's binaries, PostgreSQL 15, also as
 *     root), started once for the JVM and stopped when it exits: a fresh machine needs nothing set
 *     up.</li>
 * </ol>
 * When none works the tests fail with a message saying how to provide a database: an integration
 * test that silently skips proves nothing.
 *
 * <p>Tests never share state: each test class asks for its own {@link TestingSchema} (or database)
 * with a random name and drops it when done.
 */
public final class TestingPostgreSqlServer
{
    public static final String URL_ENVIRONMENT_VARIABLE = "PGSINK_TEST_JDBC_URL";

    private static TestingPostgreSqlServer instance;

    private final String jdbcUrl;
    private final Properties properties;

    private TestingPostgreSqlServer(String jdbcUrl, Properties properties)
    {
        this.jdbcUrl = jdbcUrl;
        this.properties = properties;
    }

    public static synchronized TestingPostgreSqlServer get()
    {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    /**
     * Another server speaking the PostgreSQL protocol that a test started itself, such as a
     * Greenplum container, with the same schema handling as the shared one.
     */
    public static TestingPostgreSqlServer of(String jdbcUrl, Properties properties)
    {
        Properties copy = new Properties();
        copy.putAll(properties);
        return new TestingPostgreSqlServer(jdbcUrl, copy);
    }

    private static TestingPostgreSqlServer start()
    {
        String url = System.getenv(URL_ENVIRONMENT_VARIABLE);
        if (url != null && !url.isBlank()) {
            return new TestingPostgreSqlServer(url, new Properties());
        }
        boolean docker;
        try {
            docker = DockerClientFactory.instance().isDockerAvailable();
        }
        catch (RuntimeException e) {
            docker = false;
        }
        if (!docker) {
            return startEmbedded();
        }
        @SuppressWarnings("resource") // lives as long as the test JVM; Testcontainers' reaper removes it
        PostgreSQLContainer<?> container = new PostgreSQLContainer<>("postgres:15")
                .withCommand("postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=20", "-c", "max_wal_senders=20");
        container.start();
        Properties properties = new Properties();
        properties.setProperty("user", container.getUsername());
        properties.setProperty("password", container.getPassword());
        return new TestingPostgreSqlServer(container.getJdbcUrl(), properties);
    }

    private static TestingPostgreSqlServer startEmbedded()
    {
        EmbeddedPostgres server;
        try {
            server = EmbeddedPostgres.start();
        }
        catch (IOException e) {
            throw new IllegalStateException("No PostgreSQL for the integration tests: starting an embedded one failed (" + e.getMessage() + "). Set " + URL_ENVIRONMENT_VARIABLE
                    + " to a JDBC URL of a PostgreSQL 12+ server with wal_level=logical (for example jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres),"
                    + " or make a Docker engine available so that Testcontainers can start one.", e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while starting the embedded PostgreSQL", e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "embedded-postgres-stop"));
        Properties properties = new Properties();
        properties.setProperty("user", "postgres");
        return new TestingPostgreSqlServer(server.jdbcUrl("postgres"), properties);
    }

    /** The JDBC URL of the server's default database. Credentials may be in {@link #properties()}. */
    public String jdbcUrl()
    {
        return jdbcUrl;
    }

    public Properties properties()
    {
        Properties copy = new Properties();
        copy.putAll(properties);
        return copy;
    }

    public Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection(jdbcUrl, properties);
    }

    /** Creates a schema with a random name starting with {@code prefix}; closing it drops it with everything in it. */
    public TestingSchema createSchema(String prefix)
            throws SQLException
    {
        String name = randomName(prefix);
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE SCHEMA " + name);
        }
        return new TestingSchema(this, name);
    }

    static String randomName(String prefix)
    {
        return (prefix + "_" + Long.toString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE, 36)).toLowerCase(Locale.ROOT);
    }
}
