package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.HttpSecurity;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.verify.ConnectorSettings;
import io.pgsink.connector.standalone.verify.VerifyOptions;
import org.jetbrains.annotations.Nullable;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The options {@code pgsink verify} and {@code pgsink repair} share (a picocli mixin). */
final class ComparisonOptions
{
    /** How many times a key whose source row changes while it is re-checked is re-checked again. */
    private static final int RECHECKS = 5;
    private static final long DEFAULT_CHUNK_ROWS = 10_000;
    private static final String SOURCE_PASSWORD = "PGSINK_SOURCE_PASSWORD";

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
            description = "The same properties file as for run (or --connector-config for a Kafka Connect sink).")
    Optional<Path> config;

    @Option(names = "--connector-config", paramLabel = "FILE",
            description = "Instead of --config, for a Kafka Connect sink: the pgsink sink connector's properties "
                    + "(a properties file, or the JSON of the Connect REST API); needs --source-url.")
    Optional<Path> connectorConfig;

    @Option(names = "--source-url", paramLabel = "URL",
            description = "With --connector-config: the source's JDBC URL, jdbc:postgresql://host:port/database "
                    + "(the password from PGSINK_SOURCE_PASSWORD or pgjdbc's .pgpass).")
    Optional<String> sourceUrl;

    @Option(names = "--source-user", paramLabel = "USER", description = "With --connector-config: the source user.")
    Optional<String> sourceUser;

    @Option(names = "--source-tables", paramLabel = "LIST", split = ",",
            description = "With --connector-config: the compared source tables (schema.table, comma-separated); "
                    + "by default those the connector's topics name (<topic.prefix>.<schema>.<table>).")
    List<String> sourceTables = List.of();

    @Option(names = "--chunk-rows", paramLabel = "N",
            description = "Source rows per key range hashed at once (default: " + DEFAULT_CHUNK_ROWS + "; on a"
                    + " Greenplum target " + VerifyOptions.DISTRIBUTED_RANGE_ROWS + ", a range that differs cut"
                    + " into ranges of " + DEFAULT_CHUNK_ROWS + ").")
    @Nullable
    Long chunkRows;

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

    @Option(names = "--http-port", paramLabel = "PORT",
            description = "Serve the progress per table (pgsink_verify_* meters) at http://127.0.0.1:PORT/metrics "
                    + "while comparing, in the service's Prometheus format; no TLS, no credentials.")
    Optional<Integer> httpPort;

    /**
     * What to compare: the service's configuration ({@code --config}), or a Kafka Connect sink's
     * ({@code --connector-config} with {@code --source-url}).
     *
     * @throws CommandLine.ParameterException when neither or both are given
     */
    LoadSettings settings(CommandLine commandLine, Map<String, String> environment)
    {
        if (config.isPresent() == connectorConfig.isPresent()) {
            throw new CommandLine.ParameterException(commandLine, "Give either --config or --connector-config");
        }
        if (config.isPresent()) {
            return StandaloneConfig.load(config.get(), environment).loadSettings();
        }
        if (sourceUrl.isEmpty()) {
            throw new CommandLine.ParameterException(commandLine, "--connector-config needs --source-url");
        }
        return ConnectorSettings.of(ConnectorSettings.read(connectorConfig.get()), sourceUrl.get(), sourceUser,
                Optional.ofNullable(environment.get(SOURCE_PASSWORD)), sourceTables);
    }

    /**
     * Serves {@code metrics} at {@code --http-port}, when given; the caller closes the endpoint.
     *
     * @throws CommandLine.ParameterException when the port cannot be listened on
     */
    Optional<HttpEndpoint> serveMetrics(CommandLine commandLine, SinkMetrics metrics)
    {
        if (httpPort.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(HttpEndpoint.start("127.0.0.1", httpPort.get(),
                    new HttpSecurity(Optional.empty(), Optional.empty(), Optional.empty()), metrics::scrape,
                    () -> new HttpEndpoint.Health(true, "{\"status\":\"UP\"}")));
        }
        catch (IOException e) {
            throw new CommandLine.ParameterException(commandLine, "Invalid value " + httpPort.get()
                    + " for option --http-port: cannot listen on 127.0.0.1:" + httpPort.get() + " (" + e.getMessage()
                    + "); give a free port");
        }
    }

    /** @throws CommandLine.ParameterException when a value is out of range */
    VerifyOptions options(CommandLine commandLine)
    {
        if (chunkRows != null && chunkRows < 1 || parallelism < 1 || parallelism > 64 || maxKeys < 1
                || catchUpTimeoutMillis < 0) {
            throw new CommandLine.ParameterException(commandLine,
                    "--chunk-rows and --max-keys must be positive, --parallelism 1 to 64, "
                            + "--catch-up-timeout-ms at least 0");
        }
        Duration catchUpTimeout = Duration.ofMillis(catchUpTimeoutMillis);
        return chunkRows == null
                ? new VerifyOptions(DEFAULT_CHUNK_ROWS, parallelism, maxKeys, catchUpTimeout, RECHECKS,
                        VerifyOptions.DISTRIBUTED_RANGE_ROWS)
                : new VerifyOptions(chunkRows, parallelism, maxKeys, catchUpTimeout, RECHECKS);
    }
}
