package io.pgsink.connector.standalone.service;

import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.engine.SinkChangeConsumer;
import io.pgsink.connector.standalone.engine.TargetOffsetBackingStore;
import io.pgsink.connector.standalone.load.InitialLoad;
import io.pgsink.connector.standalone.load.LoadedChanges;
import io.pgsink.connector.standalone.load.SlotCreationTimedOutException;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.preflight.SourcePreflight;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.connector.standalone.source.ReadingStore;
import io.pgsink.connector.standalone.source.SlotCreationWatch;
import io.pgsink.connector.standalone.source.SourceCatalogColumns;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.connector.standalone.source.SourceTableReader;
import io.pgsink.connector.standalone.source.SourceTableWatch;
import io.pgsink.connector.standalone.source.TableChanges;
import io.pgsink.connector.standalone.source.TargetReadingStore;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.FailureEpisode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnSelectingSink;
import io.pgsink.merge.MergeApplier;
import io.pgsink.merge.session.TargetConnector;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.Objects.requireNonNull;

/**
 * The standalone service: a Debezium embedded engine reading PostgreSQL, feeding a
 * {@link BufferedSink} over a {@link MergeApplier}, with metrics, health and progress logging.
 *
 * <p>Lifecycle: {@link #run()} blocks while the service streams; {@link #close()} (from another
 * thread, e.g. a shutdown hook) stops it. When the target or source is unreachable, {@code run}
 * starts over with backoff: it opens a new sink, reads the positions committed in the target,
 * checks the source ({@link SourcePreflight}) and starts a new engine from there. Any other
 * failure ends {@code run} with a {@link SinkException}; which is which is
 * {@link EngineFailures#isRetriable}'s call, by the taxonomy of {@code SqlFailures}. What the service is doing
 * is its {@link ServiceState}, for {@code /health} and {@code pgsink_state}.
 * A kill at any moment is safe: see {@link SinkChangeConsumer} for why nothing is lost or applied
 * twice. The service claims the writer generation of its {@code sink.name} when it starts: a second
 * service started with the same name claims after it, and this one stops at its next flush
 * ({@code WriterFencedException}), applying nothing more.
 *
 * <p>This class holds the episode of restarts and one run's steps; the engine itself is an
 * {@link EngineRunner}'s to run and stop, the HTTP endpoint and progress log are
 * {@link ServiceEndpoints}, and what a failure that ends the service says is {@link ServiceFailures}'.
 */
public final class StandaloneService
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(StandaloneService.class);
    /**
     * How often the source's tables are read for what change events do not say (renames, drops, partitions): a catalog
     * query, cheap.
     */
    private static final long TABLE_WATCH_INTERVAL_MILLIS = 2_000;

    private final StandaloneConfig config;
    private final SinkConfig sinkConfig;
    private final String name;
    private final SinkMetrics metrics;
    private final Backoff backoff;
    // whether the last engine run applied a batch: the restart backoff then starts over
    private boolean engineFinishedABatch;
    private final Map<String, SourcePosition> committed = new ConcurrentHashMap<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final EngineRunner engine;
    private final ServiceState state;
    private final SourcePreflight preflight;
    private final ServiceEndpoints endpoints;
    private final ServiceFailures failures;
    /** The writer generation this service claimed (see {@code MergeApplier.claim}); 0 before. */
    private long generation;
    private final AtomicReference<InitialLoad> initialLoad = new AtomicReference<>();
    private volatile boolean stopRequested;
    /** Whether an engine run of this service created the replication slot (it did not exist when the run checked). */
    private boolean slotCreatedByThisService;
    /** Whether Debezium began streaming once: from then on the slot holds a position worth keeping. */
    private volatile boolean streamingStarted;
    private volatile boolean running;

    public StandaloneService(StandaloneConfig config)
    {
        this.config = requireNonNull(config, "config is null");
        this.sinkConfig = config.sink();
        this.name = sinkConfig.sinkName();
        this.metrics = new SinkMetrics(name);
        this.backoff = config.sink().retryBackoff();
        this.state = new ServiceState(name, Instant::now);
        this.preflight = new SourcePreflight(config);
        this.engine = new EngineRunner(name);
        this.endpoints = new ServiceEndpoints(config, metrics, this::health, engine::lastPosition);
        this.failures = new ServiceFailures(config);
        metrics.stateGauges(state);
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
            endpoints.start();
            FailureEpisode restarts = new FailureEpisode(backoff);
            while (!stopRequested) {
                Throwable error = runEngine();
                if (stopRequested) {
                    break;
                }
                if (error == null) {
                    error = new SinkException(ErrorCode.TRANSIENT, "The Debezium engine stopped without an error");
                }
                if (!EngineFailures.isRetriable(error)) {
                    state.failed(error);
                    throw failures.withSlotCleanup(failures.failure(error),
                            slotCreatedByThisService && !streamingStarted);
                }
                if (engineFinishedABatch) {
                    // the failure came after a run that applied changes: its first wait is short again
                    restarts.succeeded();
                }
                long wait = restarts.failed();
                state.retrying(error, restarts.failures());
                log.warn("{} - stopped by a transient failure, restarting from the positions stored in the target in "
                        + "{} ms (attempt {}): {}", name, wait, restarts.failures(), error.toString());
                if (finished.await(wait, TimeUnit.MILLISECONDS)) {
                    break;
                }
            }
            state.set(ServiceState.State.STOPPED);
        }
        finally {
            endpoints.stop();
            finished.countDown();
        }
    }

    /** Runs one engine until it stops; returns why it stopped (null after {@link #close()}). */
    private @Nullable Throwable runEngine()
    {
        engineFinishedABatch = false;
        if (state.state() != ServiceState.State.RETRYING) {
            state.set(ServiceState.State.STARTING);
        }
        try (Closer opened = new Closer()) {
            return runEngine(opened);
        }
    }

    /**
     * Opens the sink, checks the source, loads (when configured), watches the source tables and
     * runs the engine; everything opened is registered with {@code opened}, which closes it.
     */
    private @Nullable Throwable runEngine(Closer opened)
    {
        BufferedSink sink;
        try {
            sink = opened.register(openSink());
        }
        catch (RuntimeException e) {
            return e;
        }
        resumeFrom(sink);
        boolean slotExists;
        try {
            slotExists = preflight.check(committed);
        }
        catch (SinkException e) {
            return e;
        }
        slotCreatedByThisService |= !slotExists;
        // creating the slot (the initial load's, or Debezium's) waits for every open transaction on the source: say
        // which
        SlotCreationWatch slotWatch = slotExists ? null : opened.register(SlotCreationWatch.start(name,
                new SourceDatabase(config.debezium()), config.slotCreationLogIntervalMillis()));
        LoadedChanges loaded = LoadedChanges.NONE;
        if (config.copyLoad()) {
            try {
                loaded = load();
            }
            catch (Exception e) {
                if (slotWatch != null && EngineFailures.causes(e, SlotCreationTimedOutException.class)) {
                    return failures.slotCreationTimedOut(slotWatch);
                }
                // an InterruptedException: close() stopped the load
                return stopRequested ? null : e;
            }
            if (stopRequested) {
                return null;
            }
        }
        SourceTableWatch tableWatch;
        try {
            tableWatch = opened.register(startTableWatch());
        }
        catch (SinkException e) {
            return e;
        }
        Optional<SinkException> refused = tableWatch.failure();
        if (refused.isPresent()) {
            return refused.get();
        }
        SinkChangeConsumer changeConsumer = new SinkChangeConsumer(name,
                ColumnSelectingSink.wrap(sink, sinkConfig.columnSelection()),
                new DebeziumRecordMapper(config.unavailablePlaceholder(),
                        DebeziumRecordMapper.KeyChanges.UPDATE_FROM_OLD_KEY),
                metrics, System::currentTimeMillis, backoff, state, loaded, !committed.isEmpty(),
                        config.flushBoundary(),
                tableWatch);
        Throwable error = runEngine(opened, changeConsumer);
        if (stopRequested) {
            return null;
        }
        if (slotWatch != null && !slotWatch.blockers().isEmpty()
                && EngineFailures.mentions(error, "waiting for source task to start")) {
            return failures.slotCreationTimedOut(slotWatch);
        }
        return error;
    }

    /** The sink over a new applier that holds this service's generation; closes the applier if that fails. */
    private BufferedSink openSink()
    {
        MergeApplier applier = MergeApplier.builder(sinkConfig).copyListener(metrics::copiedBytes)
                .poolMetrics(metrics.poolMetrics()).positionText(LsnText::of)
                .sourceColumns(SourceCatalogColumns.atStart(new SourceDatabase(config.debezium()))).build();
        try {
            // claimed once per service: a restarted engine keeps the generation, so that of two
            // services with one sink.name the one started last writes
            if (generation == 0) {
                generation = applier.claim("");
            }
            else {
                applier.hold("", generation);
            }
            // reads the positions stored in the target, which may fail (the target restarting)
            return new BufferedSink(name, sinkConfig.flushPolicy(), applier, new CommittedPositions(), System::nanoTime,
                    sinkConfig.toleratesRejectedRows());
        }
        catch (RuntimeException e) {
            // its connection pool would otherwise outlive this attempt, trying to connect for ever
            try {
                applier.close();
            }
            catch (RuntimeException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /** Takes the positions stored in the target as the ones to resume from. */
    private void resumeFrom(BufferedSink sink)
    {
        committed.clear();
        committed.putAll(sink.committedPositions());
        if (committed.isEmpty()) {
            log.info("{} - no positions stored in the target: Debezium starts per snapshot.mode ({})", name,
                    config.debezium().getOrDefault("snapshot.mode", "initial"));
        }
        for (SourcePosition position : committed.values()) {
            log.info("{} - resuming from the position stored in the target: {}", name, position);
        }
    }

    /** Copies the captured tables into the target (or resumes that copy); the changes it loaded. */
    private LoadedChanges load()
            throws Exception
    {
        InitialLoad initialLoad = new InitialLoad(config.loadSettings(), TargetConnector.fromConfig(sinkConfig),
                metrics);
        try {
            this.initialLoad.set(initialLoad);
            state.set(ServiceState.State.LOADING);
            LoadedChanges loaded = initialLoad.run(!committed.isEmpty());
            if (committed.isEmpty()) {
                preflight.checkPublicationAfterLoad();
            }
            return loaded;
        }
        finally {
            this.initialLoad.set(null);
        }
    }

    private SourceTableWatch startTableWatch()
    {
        ReadingStore readings = new TargetReadingStore(sinkConfig, TargetConnector.fromConfig(sinkConfig));
        return SourceTableWatch.start(name, new SourceTableReader(name, new SourceDatabase(config.debezium())),
                tableChanges(readings), readings,
                // after a load the stored reading is the load's (a load from scratch deletes the one before)
                !committed.isEmpty() || config.copyLoad(),
                TABLE_WATCH_INTERVAL_MILLIS);
    }

    /** Runs the Debezium engine into {@code changeConsumer} until it stops; why it stopped. */
    private @Nullable Throwable runEngine(Closer opened, SinkChangeConsumer changeConsumer)
    {
        try {
            opened.register(TargetOffsetBackingStore.register(name, () -> Map.copyOf(committed)));
            return engine.run(config.debeziumProperties(), changeConsumer, this::streamingStarted, () -> stopRequested);
        }
        catch (RuntimeException e) {
            return e;
        }
        finally {
            engineFinishedABatch = changeConsumer.finishedABatch();
        }
    }

    /** Debezium began streaming: from then on the slot holds a position worth keeping. */
    private void streamingStarted()
    {
        streamingStarted = true;
        state.set(ServiceState.State.STREAMING);
        log.info("{} - streaming changes from {} into {}", name, config.sourceDescription(), sinkConfig.targetUrl());
    }

    /** What a change of the captured source tables between two readings of the catalog means to the target. */
    private TableChanges tableChanges(ReadingStore readings)
    {
        CapturedTables captured = config.capturedTables();
        return new TableChanges(table -> captured.captures(table.schema(), table.table()),
                Boolean.parseBoolean(config.debezium().getOrDefault("publish.via.partition.root", "false")),
                sinkConfig.tableNameFormat()::targetOf, readings);
    }

    HttpEndpoint.Health health()
    {
        return state.health();
    }

    public ServiceState.State state()
    {
        return state.state();
    }

    /** The HTTP endpoint's port, or -1 when it is disabled or not started. */
    public int httpPort()
    {
        return endpoints.httpPort();
    }

    public SinkMetrics metrics()
    {
        return metrics;
    }

    /** Positions committed in the target so far, per source partition. */
    public Map<String, SourcePosition> committedPositions()
    {
        return Map.copyOf(committed);
    }

    /**
     * Stops streaming and waits for {@link #run()} to return. Buffered, unflushed events are resent by the source next
     * time.
     */
    @Override
    public void close()
    {
        stopRequested = true;
        state.set(ServiceState.State.STOPPING);
        InitialLoad load = initialLoad.get();
        if (load != null) {
            load.stop();
        }
        engine.stop();
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
