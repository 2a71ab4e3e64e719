package io.pgsink.bench.support;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** The JDBC URL of the tests' target server, with its user and password in it, as the benchmarks take it. */
public final class TestingBenchmarkDatabase
{
    private TestingBenchmarkDatabase() {}

    public static String url()
    {
        TestingPostgreSqlServer server = TestingPostgreSqlServer.target();
        String url = server.jdbcUrl();
        String user = server.properties().getProperty("user");
        if (user != null && !url.contains("user=")) {
            url += (url.contains("?") ? "&" : "?") + "user=" + user
                    + "&password=" + server.properties().getProperty("password");
        }
        return url;
    }
}
