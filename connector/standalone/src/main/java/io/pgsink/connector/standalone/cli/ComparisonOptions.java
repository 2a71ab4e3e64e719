package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.verify.VerifyOptions;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/** The options {@code pgsink verify} and {@code pgsink repair} share (a picocli mixin). */
final class ComparisonOptions
{
    /** How many times a key whose source row changes while it is re-checked is re-checked again. */
    private static final int RECHECKS = 5;

    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE",
            description = "The same properties file as for run.")
    Path config;

    @Option(names = "--chunk-rows", paramLabel = "N", defaultValue = "10000",
            description = "Source rows per key range hashed at once (default: ${DEFAULT-VALUE}).")
    long chunkRows;

    @Option(names = "--parallelism", paramLabel = "N", defaultValue = "2",
            description = "Key ranges compared at once, each on a source and a target connection (default: "
                    + "${DEFAULT-VALUE}).")
    int parallelism;

    @Option(names = "--max-keys", paramLabel = "N", defaultValue = "1000",
            description = "Differing keys listed, re-checked and repaired per table; more are only counted "
                    + "(default: ${DEFAULT-VALUE}).")
    int maxKeys;

    @Option(names = "--catch-up-timeout-ms", paramLabel = "MS", defaultValue = "60000",
            description = "How long re-checking a differing key waits for the running service to apply the "
                    + "source's changes "
                    + "up to the moment the key was read (default: ${DEFAULT-VALUE}).")
    long catchUpTimeoutMillis;

    @Option(names = "--json", paramLabel = "FILE", description = "Also write the verification report as JSON to FILE.")
    Optional<Path> json;

    /** @throws CommandLine.ParameterException when a value is out of range */
    VerifyOptions options(CommandLine commandLine)
    {
        if (chunkRows < 1 || parallelism < 1 || parallelism > 64 || maxKeys < 1 || catchUpTimeoutMillis < 0) {
            throw new CommandLine.ParameterException(commandLine,
                    "--chunk-rows and --max-keys must be positive, --parallelism 1 to 64, "
                            + "--catch-up-timeout-ms at least 0");
        }
        return new VerifyOptions(chunkRows, parallelism, maxKeys, Duration.ofMillis(catchUpTimeoutMillis), RECHECKS);
    }
}
