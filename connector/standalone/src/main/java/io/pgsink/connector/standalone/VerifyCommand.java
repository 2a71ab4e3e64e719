package io.pgsink.connector.standalone;

import io.pgsink.connector.standalone.verify.Verifier;
import io.pgsink.connector.standalone.verify.VerifyOptions;
import io.pgsink.connector.standalone.verify.VerifyReport;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
import io.pgsink.merge.TargetConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code pgsink verify --config FILE}: compares every captured source table with its target table
 * and names the keys that are missing, extra or different; exits 0 when all are equal, 1 when
 * some differ, 2 when the configuration is invalid or a table cannot be compared.
 */
@Command(name = "verify", description = "Compare every captured source table with its target table, by key ranges hashed on both servers, and name the keys that are "
        + "missing, extra or different (keys only, never values). Read-only; runs while the service streams or is stopped. Exit code 0: equal, 1: differences, 2: invalid configuration.")
final class VerifyCommand
        implements Callable<Integer>
{
    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE", description = "The same properties file as for run.")
    private Path config;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the report as JSON to FILE.")
    private Optional<Path> json;

    @Option(names = "--chunk-rows", paramLabel = "N", defaultValue = "10000", description = "Source rows per key range hashed at once (default: ${DEFAULT-VALUE}).")
    private long chunkRows;

    @Option(names = "--parallelism", paramLabel = "N", defaultValue = "2", description = "Key ranges compared at once, each on a source and a target connection (default: ${DEFAULT-VALUE}).")
    private int parallelism;

    @Option(names = "--max-keys", paramLabel = "N", defaultValue = "1000", description = "Differing keys listed and re-checked per table; more are only counted (default: ${DEFAULT-VALUE}).")
    private int maxKeys;

    @Option(names = "--catch-up-timeout-ms", paramLabel = "MS", defaultValue = "60000",
            description = "How long re-checking a differing key waits for the running service to apply the source's changes up to the moment the key was read (default: ${DEFAULT-VALUE}).")
    private long catchUpTimeoutMillis;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
            throws InterruptedException
    {
        if (chunkRows < 1 || parallelism < 1 || parallelism > 64 || maxKeys < 1 || catchUpTimeoutMillis < 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--chunk-rows and --max-keys must be positive, --parallelism 1 to 64, --catch-up-timeout-ms at least 0");
        }
        StandaloneConfig parsed = StandaloneConfig.load(config, System.getenv());
        VerifyOptions options = new VerifyOptions(chunkRows, parallelism, maxKeys, Duration.ofMillis(catchUpTimeoutMillis), 5);
        VerifyReport report = new Verifier(parsed.loadSettings(), TargetConnector.fromConfig(parsed.sink()), options).run();
        PrintWriter out = spec.commandLine().getOut();
        report.lines().forEach(out::println);
        out.flush();
        if (json.isPresent()) {
            try {
                Files.writeString(json.get(), report.json(), StandardCharsets.UTF_8);
            }
            catch (IOException e) {
                throw new SinkException(ErrorCode.CONFIG, "Cannot write the JSON report to " + json.get().toAbsolutePath() + ": " + e, e);
            }
        }
        return report.equal() ? PgsinkCommand.EXIT_OK : PgsinkCommand.EXIT_FAILED;
    }
}
