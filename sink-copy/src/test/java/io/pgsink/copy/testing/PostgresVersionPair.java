package io.pgsink.copy.testing;

import java.util.ArrayList;
import java.util.List;

/**
 * A source and a target PostgreSQL major version of the cross-version suite: the
 * {@link CrossVersion} classes ({@code CrossVersion*IT}) run once per pair of {@link #pairs()}.
 *
 * <p>The versions come from the system property {@value #MATRIX_PROPERTY}, a comma-separated list of
 * major versions such as {@code 13,14,15,16,17,18}: each version to itself, then the oldest to the
 * newest and the newest to the oldest. Without it the suite runs what CI runs, the oldest and the
 * newest supported version against each other: {@code 13 -> 18} and {@code 18 -> 13}, so that
 * each is a source once and a target once.
 */
public record PostgresVersionPair(int source, int target)
{
    public static final String MATRIX_PROPERTY = "pgsink.test.postgres.matrix";

    /** The pairs to run, by {@value #MATRIX_PROPERTY}. */
    public static List<PostgresVersionPair> pairs()
    {
        List<Integer> supported = TestingPostgreSqlServer.SUPPORTED_VERSIONS;
        int oldest = supported.get(0);
        int newest = supported.get(supported.size() - 1);
        String matrix = System.getProperty(MATRIX_PROPERTY, "");
        if (matrix.isBlank()) {
            return List.of(new PostgresVersionPair(oldest, newest), new PostgresVersionPair(newest, oldest));
        }
        List<Integer> versions = new ArrayList<>();
        for (String version : matrix.split(",")) {
            if (!version.isBlank()) {
                versions.add(TestingPostgreSqlServer.parseVersion(MATRIX_PROPERTY, version.strip()));
            }
        }
        List<PostgresVersionPair> pairs = new ArrayList<>();
        for (int version : versions) {
            pairs.add(new PostgresVersionPair(version, version));
        }
        int low = versions.stream().mapToInt(Integer::intValue).min().orElseThrow();
        int high = versions.stream().mapToInt(Integer::intValue).max().orElseThrow();
        if (low != high) {
            pairs.add(new PostgresVersionPair(low, high));
            pairs.add(new PostgresVersionPair(high, low));
        }
        return List.copyOf(pairs);
    }

    public TestingPostgreSqlServer sourceServer()
    {
        return TestingPostgreSqlServer.get(source);
    }

    public TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.get(target);
    }

    @Override
    public String toString()
    {
        return "PostgreSQL " + source + " -> " + target;
    }
}
