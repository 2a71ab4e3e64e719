package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.logging.LogFormat;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import picocli.CommandLine.Command;
import picocli.CommandLine;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.Properties;

/**
 * {@code pgsink}: the standalone service's command line.
 * <pre>
 * pgsink run --config FILE        stream changes from the source into the target until stopped
 * pgsink check --config FILE      verify both databases before streaming
 * pgsink verify --config FILE     compare every captured table with its target, key by key
 * pgsink repair --config FILE     rewrite the keys verify finds different from the source
 * pgsink quickstart               a self-contained demo that ends with PASS or FAIL
 * </pre>
 * Exit codes: 0 success, 1 failure (a check failed, streaming stopped with an error, the demo's
 * target differs from its source), 2 invalid configuration (file unreadable, bad values) or usage.
 */
@Command(name = "pgsink",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Change-data-capture sink: streams PostgreSQL changes (Debezium, pgoutput) into PostgreSQL or "
                + "Greenplum at COPY speed.",
        subcommands = {RunCommand.class, CheckCommand.class, ResetCommand.class, VerifyCommand.class,
                RepairCommand.class, QuickstartCommand.class, CommandLine.HelpCommand.class})
public final class PgsinkCommand
        implements Runnable
{
    static final int EXIT_OK = 0;
    static final int EXIT_FAILED = 1;
    static final int EXIT_USAGE = 2;

    private static final String SIMPLE_LOGGER_LEVEL = "org.slf4j.simpleLogger.defaultLogLevel";

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    public static void main(String[] args)
    {
        Optional<String> logFormat = LogFormat.select(System.getProperties(), System.getenv());
        if (logFormat.isPresent()) {
            System.err.println("pgsink: " + logFormat.get());
            System.exit(EXIT_USAGE);
        }
        if (args.length > 0 && args[0].equals("quickstart") && System.getProperty(SIMPLE_LOGGER_LEVEL) == null) {
            // the quickstart prints its own progress; the service's lifecycle logs would drown it
            System.setProperty(SIMPLE_LOGGER_LEVEL, "warn");
        }
        System.exit(execute(args));
    }

    static int execute(String... args)
    {
        return execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
    }

    static int execute(PrintWriter out, PrintWriter err, String... args)
    {
        CommandLine commandLine = new CommandLine(new PgsinkCommand());
        commandLine.setOut(out);
        commandLine.setErr(err);
        commandLine.setExecutionExceptionHandler((exception, line, parseResult) -> {
            if (exception instanceof SinkException sinkException) {
                line.getErr().println("pgsink: " + sinkException.getMessage());
                line.getErr().flush();
                return sinkException.errorCode() == ErrorCode.CONFIG ? EXIT_USAGE : EXIT_FAILED;
            }
            throw exception;
        });
        return commandLine.execute(args);
    }

    @Override
    public void run()
    {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "Missing command: run, check, verify, repair, reset or quickstart");
    }

    /** The project version: the jar manifest's, else the one the build wrote into version.properties. */
    static final class Version
            implements CommandLine.IVersionProvider
    {
        @Override
        public String[] getVersion()
        {
            return new String[] {"pgsink " + version()};
        }

        static String version()
        {
            String version = PgsinkCommand.class.getPackage().getImplementationVersion();
            if (version != null) {
                return version;
            }
            Properties properties = new Properties();
            try (InputStream resource = PgsinkCommand.class.getResourceAsStream("version.properties")) {
                if (resource != null) {
                    properties.load(resource);
                }
            }
            catch (IOException e) {
                // a broken build: say so below rather than fail --version
            }
            String filtered = properties.getProperty("version", "");
            boolean unfiltered = filtered.isEmpty() || filtered.startsWith("${");
            return unfiltered ? "(version unknown: built without Maven)" : filtered;
        }
    }
}
