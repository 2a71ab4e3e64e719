package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Permanent target failures stop {@code pgsink run} with exit code 1 and one message saying what
 * to do, instead of being retried forever: a login the server refuses (SQLState class 28) and a
 * role without a privilege the sink needs (42501). The test server trusts local logins, so a wrong
 * password cannot be shown against it; a role that does not exist fails the login the same way
 * (28000), and {@code SqlFailuresTest} pins 28P01 to the same class.
 */
class TargetAccessIT
{
    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("access");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)");
        target.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)");
    }

    @Test
    @Timeout(180)
    void loginTheTargetRefusesStopsWithExitCode1(@TempDir Path directory)
            throws Exception
    {
        String role = TestingDatabase.randomName("pgsink_no_such_role");
        TestingCommand outcome = TestingCommand.run("run", "--config", configFile(directory, Map.of("target.user", role)).toString());
        assertThat(outcome.exitCode()).as(outcome.err()).isEqualTo(1);
        assertThat(outcome.err())
                .startsWith("pgsink: ")
                .contains("role \"" + role + "\" does not exist [SQLState 28000]")
                .contains("What to do: the server refused the login: check target.user and target.password")
                .doesNotContain("\tat ");
        assertThat(outcome.err().lines()).hasSize(1);
    }

    @Test
    @Timeout(180)
    void roleWithoutPrivilegeStopsWithExitCode1(@TempDir Path directory)
            throws Exception
    {
        String role = TestingDatabase.randomName("pgsink_unprivileged");
        target.execute("CREATE ROLE " + role + " LOGIN", "REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        try {
            TestingCommand outcome = TestingCommand.run("run", "--config", configFile(directory, Map.of("target.user", role)).toString());
            assertThat(outcome.exitCode()).as(outcome.err()).isEqualTo(1);
            assertThat(outcome.err())
                    .startsWith("pgsink: ")
                    .contains("permission denied for schema public [SQLState 42501]")
                    .contains("What to do: the user target.user names lacks a privilege: grant it")
                    .doesNotContain("\tat ");
            assertThat(outcome.err().lines()).hasSize(1);
        }
        finally {
            target.execute("DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }

    /**
     * schema.evolution=add-columns and a table to create where the target user may not: check
     * names the missing CREATE and the GRANT; run stops before streaming in the access-failure
     * format, and leaves no replication slot behind.
     */
    @Test
    @Timeout(180)
    void tableTheUserMayNotCreateFailsCheckAndRunWithoutASlotLeft(@TempDir Path directory)
            throws Exception
    {
        String role = TestingDatabase.randomName("pgsink_no_create");
        // the sink's own tables go into a schema of the user's: only the table to create is refused
        target.execute("DROP TABLE public.orders", "CREATE ROLE " + role
                + " LOGIN", "REVOKE CREATE ON SCHEMA public FROM PUBLIC", "CREATE SCHEMA sink_state AUTHORIZATION "
                + role);
        try {
            Path config = configFile(directory, Map.of("target.user", role, "schema.evolution", "add-columns",
                    "offsets.schema", "sink_state"));
            TestingCommand check = TestingCommand.run("check", "--config", config.toString());
            assertThat(check.out())
                    .contains("[FAIL] target " + target.jdbcUrl()
                    + ": table \"public\".\"orders\" does not exist yet and will be created from the source table"
                            + " (schema.evolution=add-columns), but the user may not create tables in schema public: "
                            + "GRANT CREATE ON SCHEMA \"public\" TO \"" + role + "\"");
            assertThat(check.exitCode()).isEqualTo(1);

            TestingCommand run = TestingCommand.run("run", "--config", config.toString());
            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            assertThat(run.err())
                    .startsWith("pgsink: ")
                    .contains("Cannot prepare target table \"public\".\"orders\" for \"public\".\"orders\": "
                    + "permission denied for schema public [SQLState 42501]")
                    .contains("What to do: the user target.user names lacks a privilege: grant it")
                    .contains("a missing table, which needs CREATE on its schema")
                    .contains("(replication slot " + sinkName
                    + ", which this run created before streaming began, was dropped)")
                    .doesNotContain("\tat ")
                    .doesNotContain("PSQLException");
            assertThat(run.err().lines()).hasSize(1);
            assertThat(source.replicationSlots()).as("replication slots left behind").isEmpty();
        }
        finally {
            target.execute("GRANT CREATE ON SCHEMA public TO PUBLIC", "DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }

    private Path configFile(Path directory, Map<String, String> extra)
            throws IOException
    {
        Map<String, String> properties = pipeline.properties("public.orders");
        properties.put("retry.backoff.max.ms", "1000");
        properties.putAll(extra);
        return TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
    }
}
