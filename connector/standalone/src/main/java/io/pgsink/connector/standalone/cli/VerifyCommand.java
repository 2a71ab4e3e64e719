package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.verify.Verifier;
import io.pgsink.connector.standalone.verify.VerifyReport;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.session.TargetConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code pgsink verify --config FILE}: compares every captured source table with its target table
 * and names the keys that are missing, extra or different; exits 0 when all are equal, 1 when
 * some differ, 2 when the configuration is invalid or a table cannot be compared.
 */
@Command(name = "verify",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Compare every captured source table with its target table, by key ranges hashed "
        + "on both servers, and name the keys that are missing, extra, different or (Greenplum) on a segment "
        + "that does not own them (keys only, never values). Writes nothing to the tables (on Greenplum one "
        + "temporary table per table); runs while the service streams or is stopped. Exit code 0: equal, "
        + "1: differences, 2: invalid configuration.")
final class VerifyCommand
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
        VerifyReport report;
        try {
            report = new Verifier(settings, TargetConnector.fromConfig(settings.sink()),
                    comparison.options(spec.commandLine()), metrics).run();
        }
        finally {
            endpoint.ifPresent(HttpEndpoint::close);
        }
        PrintWriter out = spec.commandLine().getOut();
        report.lines().forEach(out::println);
        out.flush();
        writeJson(comparison.json, report);
        return report.equal() ? PgsinkCommand.EXIT_OK : PgsinkCommand.EXIT_FAILED;
    }

    /** Writes {@code report} as JSON to {@code file}, when given. */
    static void writeJson(Optional<Path> file, VerifyReport report)
    {
        if (file.isPresent()) {
            try {
                Files.writeString(file.get(), report.json(), StandardCharsets.UTF_8);
            }
            catch (IOException e) {
                throw new SinkException(ErrorCode.CONFIG, "Cannot write the JSON report to "
                        + file.get().toAbsolutePath() + ": " + e,
                        e);
            }
        }
    }
}
