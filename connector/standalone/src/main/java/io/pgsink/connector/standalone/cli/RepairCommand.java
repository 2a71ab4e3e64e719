package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.service.LsnText;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.verify.Repairer;
import io.pgsink.merge.session.TargetConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code pgsink repair --config FILE}: verifies, then rewrites exactly the differing keys from the
 * source; exits 0 when everything that differed was repaired (or nothing did), 1 when more keys
 * differed than {@code --max-keys} listed, 2 on invalid configuration.
 */
@Command(name = "repair",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Verify, then apply exactly the differing keys again from the source's current "
        + "rows (deleting the target's extra keys) through the service's own apply path, while the service's "
        + "flushes wait. Says "
        + "what it changed. Exit code 0: repaired or nothing to repair, 1: more keys differ than --max-keys, "
        + "2: invalid configuration.")
final class RepairCommand
        implements Callable<Integer>
{
    @CommandLine.Mixin
    private ComparisonOptions comparison;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
            throws InterruptedException
    {
        LoadSettings settings = comparison.settings(spec.commandLine(), System.getenv());
        SinkMetrics metrics = new SinkMetrics(settings.sink().sinkName());
        Optional<HttpEndpoint> endpoint = comparison.serveMetrics(spec.commandLine(), metrics);
        Repairer.Result result;
        try {
            result = new Repairer(settings, TargetConnector.fromConfig(settings.sink()),
                    comparison.options(spec.commandLine()), LsnText::of, metrics).run();
        }
        finally {
            endpoint.ifPresent(HttpEndpoint::close);
        }
        PrintWriter out = spec.commandLine().getOut();
        result.verified().lines().forEach(out::println);
        result.lines().forEach(out::println);
        out.flush();
        VerifyCommand.writeJson(comparison.json, result.verified());
        return result.complete() ? PgsinkCommand.EXIT_OK : PgsinkCommand.EXIT_FAILED;
    }
}
