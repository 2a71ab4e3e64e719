package io.pgsink.connector.standalone.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every command answers {@code --help} and {@code -h} with its usage and exit code 0, before
 * checking its required options; {@code --version} and {@code -V} print the project's version.
 */
class CommandHelpTest
{
    /** Every subcommand, read from the command line itself: a new command is covered without editing this test. */
    private static List<String> commands()
    {
        List<String> commands = new ArrayList<>(new CommandLine(new PgsinkCommand()).getSubcommands().keySet());
        commands.remove("help");
        assertThat(commands).contains("run", "check", "reset", "quickstart");
        return commands;
    }

    @Test
    void everyCommandAnswersHelp()
    {
        for (String command : commands()) {
            for (String option : List.of("--help", "-h")) {
                TestingCommand outcome = TestingCommand.run(command, option);
                assertThat(outcome.exitCode()).as(command + " " + option + ": " + outcome.err()).isZero();
                assertThat(outcome.out()).as(command + " " + option).startsWith("Usage: pgsink " + command + " ");
                assertThat(outcome.err()).as(command + " " + option).isEmpty();
            }
        }
        TestingCommand top = TestingCommand.run("--help");
        assertThat(top.exitCode()).isZero();
        assertThat(top.out()).startsWith("Usage: pgsink ").contains("run", "check", "reset", "quickstart");
    }

    @Test
    void everyCommandPrintsTheVersion()
    {
        List<List<String>> invocations = new ArrayList<>(List.of(List.of("--version"), List.of("-V")));
        for (String command : commands()) {
            invocations.add(List.of(command, "--version"));
            invocations.add(List.of(command, "-V"));
        }
        for (List<String> invocation : invocations) {
            TestingCommand outcome = TestingCommand.run(invocation.toArray(String[]::new));
            assertThat(outcome.exitCode()).as(String.join(" ", invocation)).isZero();
            // the build's project version (version.properties from classes, the manifest in the jar)
            assertThat(outcome.out()).as(String.join(" ", invocation)).matches("pgsink "
                    + "\\d+\\.\\d+\\.\\d+(-SNAPSHOT)?\\R");
        }
    }

    @Test
    void aMissingConfigIsStillAUsageError()
    {
        TestingCommand outcome = TestingCommand.run("run");
        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).contains("Missing required option: '--config=FILE'");
    }
}
