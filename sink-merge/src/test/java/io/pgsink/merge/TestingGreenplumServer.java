package io.pgsink.merge;

import io.pgsink.copy.testing.Poll;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

import java.time.Duration;
import java.util.Properties;

import static java.util.Objects.requireNonNull;

/**
 * A single-node Greenplum or Apache Cloudberry (a coordinator and two segments in one container)
 * for one test class, started with Testcontainers from the community images of
 * woblerr/docker-greenplum and woblerr/docker-cloudberry: no vendor publishes a Greenplum image.
 * The first start runs {@code gpinitsystem} and restarts the cluster, which takes a minute or
 * two; the container is ready when the image's entry point reaches its init scripts.
 *
 * <p>Needs a Docker engine: the test classes are disabled, with the reason in the test report,
 * where {@link #dockerAvailable()} is false.
 */
final class TestingGreenplumServer
        implements AutoCloseable
{
    private static final String PASSWORD = "pgsink-test";
    private static final String DATABASE = "pgsink";

    /** The images the Greenplum tests run against, one test class each. */
    enum Image
    {
        GREENPLUM_6("woblerr/greenplum:6.27.1", "GREENPLUM", "Greenplum Database 6."),
        GREENPLUM_7("woblerr/greenplum:7.1.0", "GREENPLUM", "Greenplum Database 7."),
        CLOUDBERRY_2("woblerr/cloudberry:2.1.0-incubating", "CLOUDBERRY", "Apache Cloudberry 2.");

        final String name;
        /** The prefix of the image's environment variables. */
        final String variablePrefix;
        /** What {@code version()} of this image contains. */
        final String version;

        Image(String name, String variablePrefix, String version)
        {
            this.name = name;
            this.variablePrefix = variablePrefix;
            this.version = version;
        }
    }

    static final String NO_DOCKER = "No Docker engine (Testcontainers' DockerClientFactory.isDockerAvailable() is false): the Greenplum and Cloudberry"
            + " integration tests start woblerr/greenplum and woblerr/cloudberry containers and run only where Docker is available."
            + " Without one, the Greenplum dialect is covered by DialectSqlTest (generated SQL per version) and GreenplumDialectOnPostgreSqlIT.";

    private final GenericContainer<?> container;
    private final TestingPostgreSqlServer server;

    private TestingGreenplumServer(GenericContainer<?> container, TestingPostgreSqlServer server)
    {
        this.container = requireNonNull(container, "container is null");
        this.server = requireNonNull(server, "server is null");
    }

    /** Whether Testcontainers finds a Docker engine; the condition of the Greenplum test classes. */
    static boolean dockerAvailable()
    {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        }
        catch (RuntimeException e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // closed by close(), or by Testcontainers' reaper when the JVM ends
    static TestingGreenplumServer start(Image image)
    {
        GenericContainer<?> container = new GenericContainer<>(DockerImageName.parse(image.name))
                .withEnv(image.variablePrefix + "_PASSWORD", PASSWORD)
                .withEnv(image.variablePrefix + "_DATABASE_NAME", DATABASE)
                .withExposedPorts(5432)
                // the segments' shared memory; Docker's default /dev/shm of 64 MB is too small for a cluster
                .withSharedMemorySize(1024L * 1024 * 1024)
                .waitingFor(Wait.forLogMessage(".*INFO - Execute custom init scripts.*\\n", 1).withStartupTimeout(Duration.ofMinutes(10)));
        container.start();
        Properties properties = new Properties();
        properties.setProperty("user", "gpadmin");
        properties.setProperty("password", PASSWORD);
        String url = "jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432) + "/" + DATABASE;
        TestingGreenplumServer started = new TestingGreenplumServer(container, TestingPostgreSqlServer.of(url, properties));
        started.awaitConnection();
        return started;
    }

    TestingPostgreSqlServer server()
    {
        return server;
    }

    /** The coordinator may still restart right after the entry point logged; wait until it answers. */
    private void awaitConnection()
    {
        Poll.until("Greenplum in " + container.getDockerImageName() + " to accept connections after start", Duration.ofMinutes(2),
                () -> server.connect().close());
    }

    @Override
    public void close()
    {
        container.stop();
    }
}
