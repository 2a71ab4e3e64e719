package io.pgsink.reference;

import io.pgsink.connector.standalone.cli.PgsinkCommand;
import picocli.CommandLine;

import java.nio.file.Path;

/**
 * docs/reference/cli.md, generated from picocli's usage help of the {@code pgsink} command and each
 * of its subcommands ({@link CommandLine#getUsageMessage}), so the page says what {@code --help} says.
 */
public final class CliReference
{
    /** The page, relative to the repository root. */
    public static final Path FILE = Path.of("docs", "reference", "cli.md");

    private static final String INTRO = """
            `./pgsink` runs `connector/standalone/target/pgsink.jar` (`java -jar pgsink.jar` does the same);
            `JAVA_OPTS` passes JVM options. Exit codes: 0 stopped cleanly (or check passed), 1 stopped by a failure
            retrying cannot fix (or check found problems), 2 invalid configuration. How to run the service:
            [standalone service](../guides/standalone-service.md).
            """;

    private CliReference()
    {
    }

    public static String generate()
    {
        StringBuilder page = new StringBuilder("# Command-line reference\n\n")
                .append(Regeneration.notice(CliReference.class, "CliReferenceTest"))
                .append(INTRO);
        append(page, new CommandLine(new PgsinkCommand()));
        return page.toString();
    }

    private static void append(StringBuilder page, CommandLine command)
    {
        page.append("\n## ").append(command.getCommandSpec().qualifiedName()).append("\n\n```text\n")
                .append(command.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing())
                .append("\n```\n");
        for (CommandLine subcommand : command.getSubcommands().values()) {
            append(page, subcommand);
        }
    }
}
