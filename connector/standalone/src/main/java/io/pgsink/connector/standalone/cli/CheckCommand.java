package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.preflight.Checker;
import io.pgsink.connector.standalone.preflight.MetadataColumnConflicts;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code pgsink check --config FILE}: prints one line per check and exits 1 when any failed. */
@Command(name = "check",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Verify connectivity, permissions, wal_level, replication slot and publication, primary keys "
                + "and target tables before streaming.")
final class CheckCommand
        implements Callable<Integer>
{
    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE",
            description = "The same properties file as for run.")
    private Path config;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        StandaloneConfig parsed = StandaloneConfig.load(config, System.getenv());
        // a configuration problem the source's catalog reveals: exit code 2, as for the file's
        MetadataColumnConflicts.check(parsed);
        List<Checker.Result> results = new Checker(parsed).run();
        PrintWriter out = spec.commandLine().getOut();
        for (Checker.Result result : results) {
            out.println(result);
        }
        long failed = results.stream().filter(result -> result.status() == Checker.Status.FAIL).count();
        long warnings = results.stream().filter(result -> result.status() == Checker.Status.WARN).count();
        out.println(failed == 0
                ? "pgsink check: ready to stream (" + warnings + (warnings == 1 ? " warning)" : " warnings)")
                : "pgsink check: " + failed + (failed == 1 ? " problem" : " problems") + " to fix before streaming, "
                        + warnings + (warnings == 1 ? " warning" : " warnings"));
        out.flush();
        return failed == 0 ? PgsinkCommand.EXIT_OK : PgsinkCommand.EXIT_FAILED;
    }
}
