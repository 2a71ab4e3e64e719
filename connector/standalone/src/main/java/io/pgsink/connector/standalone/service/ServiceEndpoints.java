package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.ProgressLog;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;

import java.io.IOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * What the service shows while it runs, across its engine runs: the HTTP endpoint ({@code /metrics},
 * {@code /health}) and the progress log. Started and stopped by the thread in
 * {@link StandaloneService#run()}; {@link #httpPort()} may be asked from any thread.
 */
final class ServiceEndpoints
{
    private final StandaloneConfig config;
    private final SinkMetrics metrics;
    private final Supplier<HttpEndpoint.Health> health;
    /** The source offset of the last batch applied, "" when no engine runs. */
    private final Supplier<String> lastPosition;
    @Nullable
    private volatile HttpEndpoint http;
    @Nullable
    private volatile ScheduledExecutorService progress;

    ServiceEndpoints(StandaloneConfig config, SinkMetrics metrics, Supplier<HttpEndpoint.Health> health,
            Supplier<String> lastPosition)
    {
        this.config = requireNonNull(config, "config is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.health = requireNonNull(health, "health is null");
        this.lastPosition = requireNonNull(lastPosition, "lastPosition is null");
    }

    void start()
    {
        if (config.httpPort() >= 0) {
            try {
                http = HttpEndpoint.start(config.httpHost(), config.httpPort(), config.httpSecurity(), metrics::scrape,
                        health);
            }
            catch (IOException e) {
                throw new SinkException(ErrorCode.CONFIG,
                        "Cannot serve metrics on " + config.httpHost() + ":" + config.httpPort() + " ("
                        + StandaloneConfig.HTTP_PORT + "): " + e.getMessage(), e);
            }
        }
        if (config.progressIntervalMillis() > 0) {
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "pgsink-progress");
                thread.setDaemon(true);
                return thread;
            });
            ProgressLog progressLog = new ProgressLog(metrics, lastPosition);
            executor.scheduleAtFixedRate(progressLog::log, config.progressIntervalMillis(),
                    config.progressIntervalMillis(), TimeUnit.MILLISECONDS);
            progress = executor;
        }
    }

    void stop()
    {
        HttpEndpoint endpoint = http;
        if (endpoint != null) {
            endpoint.close();
        }
        ScheduledExecutorService executor = progress;
        if (executor != null) {
            executor.shutdownNow();
        }
    }

    /** The HTTP endpoint's port, or -1 when it is disabled or not started. */
    int httpPort()
    {
        HttpEndpoint endpoint = http;
        return endpoint == null ? -1 : endpoint.port();
    }
}
