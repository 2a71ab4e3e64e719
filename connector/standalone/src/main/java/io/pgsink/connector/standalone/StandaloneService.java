package io.pgsink.connector.standalone;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.copy.SqlFailures;
import io.pgsink.core.Backoff;
import io.pgsink.core.Batch;
import io.pgsink.core.BufferedSink;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.FlushListener;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.merge.MergeApplier;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.Objects.requireNonNull;

/**
 * The standalone service: a Debezium embedded engine reading PostgreSQL, feeding a
 * {@link BufferedSink} over a {@link MergeApplier}, with metrics, health and progress logging.
 *
 * <p>Lifecycle: {@link #run()} blocks while the service streams; {@link #close()} (from another
 * thread, e.g. a shutdown hook) stops it. When the target or source is unreachable, {@code run}
 * starts over with backoff: it opens a new sink, reads the positions committed in the target, and
 * starts a new engine from there. Any other failure ends {@code run} with a {@link SinkException}.
 * A kill at any moment is safe: see {@link SinkChangeConsumer} for why nothing is lost or applied
 * twice.
 */
public final class StandaloneService
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(StandaloneService.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    enum State
    {
        STARTING,
        STREAMING,
        RETRYING,
        STOPPING,
        STOPPED,
        FAILED,
    }

    private final StandaloneConfig config;
    private final SinkConfig sinkConfig;
    private final String name;
    private final SinkMetrics metrics;
    private final Backoff backoff;
    private final Map<String, SourcePosition> committed = new ConcurrentHashMap<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final AtomicReference<DebeziumEngine<RecordChangeEvent<SourceRecord>>> engine = new AtomicReference<>();
    private final AtomicReference<SinkChangeConsumer> consumer = new AtomicReference<>();
    private volatile State state = State.STARTING;
    private volatile boolean stopRequested;
    private volatile boolean running;
    private volatile String lastError = "";
    @Nullable
    private volatile HttpEndpoint http;
    @Nullable
    private volatile ScheduledExecutorService progress;

    public StandaloneService(StandaloneConfig config)
    {
        this.config = requireNonNull(config, "config is null");
        this.sinkConfig = config.sink();
        this.name = sinkConfig.sinkName();
        this.metrics = new SinkMetrics(name);
        this.backoff = config.sink().retryBackoff();
    }

    /**
     * Streams until {@link #close()} is called.
     *
     * @throws SinkException when the service fails for a reason retrying cannot fix (configuration,
     *         a row the target rejects, a schema mismatch)
     */
    public void run()
            throws InterruptedException
    {
        if (running) {
            throw new IllegalStateException("The service is already running");
        }
        running = true;
        try {
            config.log();
            startEndpoints();
            int attempt = 0;
            while (!stopRequested) {
                Throwable error = runEngine();
                if (stopRequested) {
                    break;
                }
                if (error == null) {
                    error = new SinkException(ErrorCode.TRANSIENT, "The Debezium engine stopped without an error");
                }
                if (!isRetriable(error)) {
                    state = State.FAILED;
                    lastError = String.valueOf(error.getMessage());
                    if (error instanceof SinkException sinkException) {
                        throw sinkException;
                    }
                    throw new SinkException(ErrorCode.CONFIG, name + " - streaming from " + config.sourceDescription() + " failed: " + error, error);
                }
                state = State.RETRYING;
                lastError = String.valueOf(error.getMessage());
                long wait = backoff.delayMillis(attempt++);
                log.warn("{} - stopped by a transient failure, restarting from the positions stored in the target in {} ms: {}", name, wait, error.toString());
                if (finished.await(wait, TimeUnit.MILLISECONDS)) {
                    break;
                }
            }
            state = State.STOPPED;
        }
        finally {
            stopEndpoints();
            finished.countDown();
        }
    }

    /** Runs one engine until it stops; returns why it stopped (null after {@link #close()}). */
    @SuppressWarnings("try") // the registration is only held open while the engine runs
    private @Nullable Throwable runEngine()
    {
        state = State.STARTING;
        BufferedSink sink;
        MergeApplier applier = null;
        try {
            applier = MergeApplier.builder(sinkConfig).copyListener(metrics::copiedBytes).poolMetrics(metrics.poolMetrics()).build();
            // reads the positions stored in the target, which may fail (the target restarting)
            sink = new BufferedSink(name, sinkConfig.flushPolicy(), applier, new CommittedPositions(), System::nanoTime,
                    sinkConfig.toleratesRejectedRows());
        }
        catch (RuntimeException e) {
            if (applier != null) {
                // its connection pool would otherwise outlive this attempt, trying to connect for ever
                applier.close();
            }
            return e;
        }
        committed.clear();
        committed.putAll(sink.committedPositions());
        if (committed.isEmpty()) {
            log.info("{} - no positions stored in the target: Debezium starts per snapshot.mode ({})", name, config.debezium().getOrDefault("snapshot.mode", "initial"));
        }
        for (SourcePosition position : committed.values()) {
            log.info("{} - resuming from the position stored in the target: {}", name, position);
        }
        AtomicReference<Throwable> error = new AtomicReference<>();
        SinkChangeConsumer changeConsumer = new SinkChangeConsumer(name, sink, new DebeziumRecordMapper(config.unavailablePlaceholder()), metrics, System::currentTimeMillis, backoff);
        try (AutoCloseable registration = TargetOffsetBackingStore.register(name, () -> Map.copyOf(committed))) {
            DebeziumEngine<RecordChangeEvent<SourceRecord>> created = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                    .using(config.debeziumProperties())
                    .notifying(changeConsumer)
                    .using((success, message, failure) -> {
                        if (!success) {
                            error.set(failure != null ? failure : new SinkException(ErrorCode.TRANSIENT, message));
                        }
                    })
                    .using(new DebeziumEngine.ConnectorCallback()
                    {
                        @Override
                        public void pollingStarted()
                        {
                            state = State.STREAMING;
                            lastError = "";
                            log.info("{} - streaming changes from {} into {}", name, config.sourceDescription(), sinkConfig.targetUrl());
                        }
                    })
                    .build();
            consumer.set(changeConsumer);
            engine.set(created);
            if (stopRequested) {
                return null;
            }
            created.run();
        }
        catch (Exception e) {
            error.compareAndSet(null, e);
        }
        finally {
            engine.set(null);
            consumer.set(null);
            sink.close();
        }
        return stopRequested ? null : error.get();
    }

    static boolean isRetriable(Throwable error)
    {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof SinkException sinkException) {
                return sinkException.isTransient();
            }
            if (cause instanceof RetriableException) {
                return true;
            }
            if (cause instanceof SQLException sqlException) {
                return SqlFailures.isTransient(sqlException);
            }
            if (cause instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    private void startEndpoints()
    {
        if (config.httpPort() >= 0) {
            try {
                http = HttpEndpoint.start(config.httpHost(), config.httpPort(), metrics::scrape, this::health);
            }
            catch (IOException e) {
                throw new SinkException(ErrorCode.CONFIG, "Cannot serve metrics on " + config.httpHost() + ":" + config.httpPort() + " (" + StandaloneConfig.HTTP_PORT + "): " + e.getMessage(), e);
            }
        }
        if (config.progressIntervalMillis() > 0) {
            ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "pgsink-progress");
                thread.setDaemon(true);
                return thread;
            });
            ProgressLog progressLog = new ProgressLog(metrics, () -> {
                SinkChangeConsumer current = consumer.get();
                return current == null ? "" : current.lastPosition();
            });
            executor.scheduleAtFixedRate(progressLog::log, config.progressIntervalMillis(), config.progressIntervalMillis(), TimeUnit.MILLISECONDS);
            progress = executor;
        }
    }

    private void stopEndpoints()
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

    HttpEndpoint.Health health()
    {
        State current = state;
        boolean up = current == State.STREAMING || current == State.STARTING;
        Map<String, String> body = new LinkedHashMap<>();
        body.put("status", up ? "UP" : "DOWN");
        body.put("state", current.name());
        body.put("sink", name);
        if (!lastError.isEmpty()) {
            body.put("error", lastError);
        }
        try {
            return new HttpEndpoint.Health(up, JSON.writeValueAsString(body));
        }
        catch (JsonProcessingException e) {
            // a map of strings always serializes
            throw new IllegalStateException(e);
        }
    }

    State state()
    {
        return state;
    }

    /** The HTTP endpoint's port, or -1 when it is disabled or not started. */
    public int httpPort()
    {
        HttpEndpoint endpoint = http;
        return endpoint == null ? -1 : endpoint.port();
    }

    SinkMetrics metrics()
    {
        return metrics;
    }

    /** Positions committed in the target so far, per source partition. */
    public Map<String, SourcePosition> committedPositions()
    {
        return Map.copyOf(committed);
    }

    /** Stops streaming and waits for {@link #run()} to return. Buffered, unflushed events are resent by the source next time. */
    @Override
    public void close()
    {
        stopRequested = true;
        state = State.STOPPING;
        SinkChangeConsumer current = consumer.get();
        if (current != null) {
            current.stop();
        }
        stopEngine();
        if (!running) {
            return;
        }
        try {
            if (!finished.await(60, TimeUnit.SECONDS)) {
                log.warn("{} - still stopping after 60 s", name);
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void stopEngine()
    {
        for (int attempt = 0; attempt < 600; attempt++) {
            DebeziumEngine<RecordChangeEvent<SourceRecord>> current = engine.get();
            if (current == null) {
                return;
            }
            try {
                current.close();
                return;
            }
            catch (IllegalStateException e) {
                if (!e.getMessage().contains("tasks are starting")) {
                    // already stopping or stopped
                    return;
                }
            }
            catch (IOException e) {
                log.warn("{} - stopping the Debezium engine failed", name, e);
                return;
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Keeps {@link #committed} current: the offset store hands it to the engine when a task starts. */
    private final class CommittedPositions
            implements FlushListener
    {
        @Override
        public void flushed(Batch batch, long elapsedNanos)
        {
            committed.putAll(batch.positions());
            metrics.flushed(batch, elapsedNanos);
        }

        @Override
        public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
        {
            metrics.flushFailed(batch, elapsedNanos, failure);
        }
    }
}
