package io.pgsink.connector.standalone.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code run} and {@code check} validate the configuration the same way, before touching a
 * database: every problem one line, exit code 2, never a stack trace.
 */
class CommandConfigurationTest
{
    private static TestingCommand pgsink(String... args)
    {
        return TestingCommand.run(args);
    }

    private static Path configFile(Path directory, String includeList)
            throws IOException
    {
        // nothing listens on port 1: a command that got past validation would fail differently
        return Files.write(directory.resolve("pgsink.properties"), List.of(
                "source.database.hostname=127.0.0.1",
                "source.database.port=1",
                "source.database.dbname=app",
                "source.database.user=cdc",
                "source.table.include.list=" + includeList,
                "target.url=jdbc:postgresql://127.0.0.1:1/dw?connectTimeout=1",
                "http.port=-1"));
    }

    @Test
    void invalidIncludeListIsAConfigurationProblemForCheckAndRun(@TempDir Path directory)
            throws IOException
    {
        Path file = configFile(directory, "public.orders,public.(items");
        for (String command : List.of("check", "run")) {
            TestingCommand outcome = pgsink(command, "--config", file.toString());
            assertThat(outcome.exitCode()).as(command).isEqualTo(2);
            assertThat(outcome.err()).as(command).isEqualTo("""
                    pgsink: Invalid pgsink configuration (1 problem):
                      Invalid value 'public.orders,public.(items' for configuration source.table.include.list: 'public.(items' is not a regular expression: Unclosed group near index 13
                    """);
            assertThat(outcome.out()).as(command).isEmpty();
        }
    }
}
