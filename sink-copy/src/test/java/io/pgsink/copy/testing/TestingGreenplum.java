package io.pgsink.copy.testing;

import java.util.Optional;
import java.util.Properties;

/**
 * The Greenplum (or Apache Cloudberry) coordinator that the Greenplum variants of the integration
 * tests write to, given by a superuser JDBC URL in the environment variable
 * {@value #URL_ENVIRONMENT_VARIABLE}, for example
 * {@code jdbc:postgresql://127.0.0.1:7000/postgres?user=gpadmin}. The tests never start or build
 * one: without the variable they are skipped, with {@link #NOT_GIVEN} as the reason. Where a
 * Docker engine answers, the merge suite also runs on containers (sink-merge's
 * {@code Greenplum7MergeIT} and siblings).
 *
 * <p>Each test class works in a schema or database of its own with a random name, dropped when it
 * is done, so several classes and runs can share one cluster.
 */
public final class TestingGreenplum
{
    public static final String URL_ENVIRONMENT_VARIABLE = "PGSINK_TEST_GREENPLUM_URL";

    /** The reason the Greenplum test classes give when they are skipped. */
    public static final String NOT_GIVEN = URL_ENVIRONMENT_VARIABLE + " is not set: the Greenplum variants of the integration tests write to a Greenplum 6/7"
            + " or Apache Cloudberry coordinator given by a superuser JDBC URL (for example jdbc:postgresql://127.0.0.1:7000/postgres?user=gpadmin)"
            + " and are skipped without one. Without it, the Greenplum dialect is covered by DialectSqlTest (generated SQL) and"
            + " GreenplumDialectOnPostgreSqlIT, and by the container tests (Greenplum7MergeIT and others) where Docker is available.";

    private static TestingPostgreSqlServer server;

    private TestingGreenplum() {}

    /** Whether {@value #URL_ENVIRONMENT_VARIABLE} names a coordinator: the condition of the Greenplum test classes. */
    public static boolean given()
    {
        return url().isPresent();
    }

    /** The coordinator at {@value #URL_ENVIRONMENT_VARIABLE}; fails when it is not set (check {@link #given()} first). */
    public static synchronized TestingPostgreSqlServer server()
    {
        if (server == null) {
            server = TestingPostgreSqlServer.of(url().orElseThrow(() -> new IllegalStateException(NOT_GIVEN)), new Properties());
        }
        return server;
    }

    private static Optional<String> url()
    {
        String url = System.getenv(URL_ENVIRONMENT_VARIABLE);
        return url == null || url.isBlank() ? Optional.empty() : Optional.of(url.strip());
    }
}
