package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.demo.Quickstart;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.util.concurrent.Callable;

/** {@code pgsink quickstart}: needs no arguments; the options only tune the demo. */
@Command(name = "quickstart",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Bring up a source and a target PostgreSQL, stream a live workload through pgsink, and check "
                + "that the target equals the source (PASS/FAIL).")
final class QuickstartCommand
        implements Callable<Integer>
{
    @Option(names = "--duration", defaultValue = "20", paramLabel = "SECONDS",
            description = "How long the workload runs (default: ${DEFAULT-VALUE}).")
    private int durationSeconds;

    @Option(names = "--rate", defaultValue = "100", paramLabel = "TPS",
            description = "Source transactions per second (default: ${DEFAULT-VALUE}).")
    private int transactionsPerSecond;

    @Option(names = "--embedded", description = "Use a throwaway PostgreSQL even when one answers on localhost:5432.")
    private boolean embedded;

    @Option(names = "--keep", description = "Keep the demo databases to look at afterwards.")
    private boolean keep;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
            throws Exception
    {
        if (durationSeconds < 1 || transactionsPerSecond < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--duration and --rate must be at least 1");
        }
        Quickstart quickstart = new Quickstart(new Quickstart.Options(durationSeconds, transactionsPerSecond, embedded,
                keep), spec.commandLine().getOut());
        return quickstart.run() ? PgsinkCommand.EXIT_OK : PgsinkCommand.EXIT_FAILED;
    }
}
