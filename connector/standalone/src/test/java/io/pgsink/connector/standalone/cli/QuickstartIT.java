package io.pgsink.connector.standalone.cli;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code pgsink quickstart}, as a user runs it (shortened): it must end with PASS and leave nothing
 * behind. The second test forces the throwaway PostgreSQL, which on CI (root) exercises running the
 * server binaries as an unprivileged user.
 */
class QuickstartIT
{
    @Test
    void passesAgainstTheLocalServerOrAThrowawayOne()
            throws Exception
    {
        String output = quickstart("quickstart", "--duration", "4", "--rate", "50");
        assertThat(output).contains("pgsink quickstart: seeded the source with 1000 orders")
                .containsPattern("(?m)^pgsink quickstart: initial load: 1,000 rows copied in [0-9.]+ s")
                .containsPattern("(?m)^PASS: target equals source \\(\\d+ rows, md5 [0-9a-f]{32}\\)$");
        assertNoDemoLeftovers();
    }

    @Test
    void passesWithTheThrowawayServer()
            throws Exception
    {
        String output = quickstart("quickstart", "--embedded", "--duration", "3", "--rate", "50");
        assertThat(output)
                .contains("starting a throwaway PostgreSQL")
                .contains("throwaway PostgreSQL is up on 127.0.0.1:")
                .containsPattern("(?m)^PASS: target equals source");
    }

    private static String quickstart(String... args)
    {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = PgsinkCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        assertThat(exitCode).as("exit code; output:\n%s\nerrors:\n%s", out, err).isZero();
        return out.toString();
    }

    private static void assertNoDemoLeftovers()
            throws Exception
    {
        // the quickstart ran against the local server when it could: its databases and slots are gone
        try (Connection connection = TestingPostgreSqlServer.get().connect(); Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT (SELECT count(*) FROM pg_database WHERE datname LIKE 'pgsink_demo_%') + "
                        + "(SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'pgsink_demo_%')")) {
            rows.next();
            assertThat(rows.getLong(1)).isZero();
        }
    }
}
