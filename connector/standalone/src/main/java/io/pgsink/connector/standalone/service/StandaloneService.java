package io.pgsink.connector.standalone.service;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.engine.SinkChangeConsumer;
import io.pgsink.connector.standalone.engine.TargetOffsetBackingStore;
import io.pgsink.connector.standalone.load.InitialLoad;
import io.pgsink.connector.standalone.load.LoadedChanges;
import io.pgsink.connector.standalone.load.SlotCreationTimedOutException;
import io.pgsink.connector.standalone.monitoring.HttpEndpoint;
import io.pgsink.connector.standalone.monitoring.ProgressLog;
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
import io.pgsink.copy.sql.SqlFailures;
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
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
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
 * starts over with backoff: it opens a new sink, reads the positions committed in the target,
 * checks the source ({@link SourcePreflight}) and starts a new engine from there. Any other
 * failure ends {@code run} with a {@link SinkException}; which is which is
 * {@link EngineFailures#isRetriable}'s call, by the taxonomy of {@code SqlFailures}. What the service is doing
 * is its {@link ServiceState}, for {@code /health} and {@code pgsink_state}.
 * A kill at any moment is safe: see {@link SinkChangeConsumer} for why nothing is lost or applied
 * twice. The service claims the writer generation of its {@code sink.name} when it starts: a second
 * service started with the same name claims after it, and this one stops at its next flush
 * ({@code WriterFencedException}), applying nothing more.
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
    /** How long a failed run waits for its connections to let go of the slot it created before dropping it. */
    private static final long SLOT_RELEASE_TIMEOUT_MILLIS = 10_000;

    private final StandaloneConfig config;
    private final SinkConfig sinkConfig;
    private final String name;
    private final SinkMetrics metrics;
    private final Backoff backoff;
    // whether the last engine run applied a batch: the restart backoff then starts over
    private boolean engineFinishedABatch;
    private final Map<String, SourcePosition> committed = new ConcurrentHashMap<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final AtomicReference<DebeziumEngine<RecordChangeEvent<SourceRecord>>> engine = new AtomicReference<>();
    private final AtomicReference<SinkChangeConsumer> consumer = new AtomicReference<>();
    private final ServiceState state;
    private final SourcePreflight preflight;
    /** The writer generation this service claimed (see {@code MergeApplier.claim}); 0 before. */
    private long generation;
    private final AtomicReference<InitialLoad> initialLoad = new AtomicReference<>();
    private volatile boolean stopRequested;
    /** Whether an engine run of this service created the replication slot (it did not exist when the run checked). */
    private boolean slotCreatedByThisService;
    /** Whether Debezium began streaming once: from then on the slot holds a position worth keeping. */
    private volatile boolean streamingStarted;
    private volatile boolean running;
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
        this.state = new ServiceState(name, Instant::now);
        this.preflight = new SourcePreflight(config);
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
            startEndpoints();
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
                    throw withSlotCleanup(failure(error));
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
            stopEndpoints();
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
                    return slotCreationTimedOut(slotWatch);
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
            return slotCreationTimedOut(slotWatch);
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
        AtomicReference<Throwable> error = new AtomicReference<>();
        try {
            opened.register(TargetOffsetBackingStore.register(name, () -> Map.copyOf(committed)));
            DebeziumEngine<RecordChangeEvent<SourceRecord>> created =
                    DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
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
                            streamingStarted = true;
                            state.set(ServiceState.State.STREAMING);
                            log.info("{} - streaming changes from {} into {}", name, config.sourceDescription(),
                                    sinkConfig.targetUrl());
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
            engineFinishedABatch = changeConsumer.finishedABatch();
        }
        return error.get();
    }

    /** What {@code error}, which retrying cannot fix, says to users. */
    private SinkException failure(Throwable error)
    {
        // the engine wraps what the consumer threw: the sink's own failure says it best
        Optional<SinkException> sinkFailure = EngineFailures.sinkFailure(error);
        if (sinkFailure.isPresent()) {
            return sinkFailure.get();
        }
        String context = name + " - streaming from " + config.sourceDescription() + " failed";
        Optional<SQLException> sql = EngineFailures.sqlFailure(error);
        if (sql.isPresent()) {
            // the server's words and SQLState, not the driver's exception text; for a refused login,
            // privilege or database (SQLState 42501, class 28, 3D000), what to do
            return SqlFailures.translate(sql.get(), ErrorCode.CONFIG, context, SqlFailures.remedy(sql.get(),
                    "source.database.user or " + SinkConfig.TARGET_USER,
                    "source.database.password or " + SinkConfig.TARGET_PASSWORD, "source.database.dbname or "
                            + SinkConfig.TARGET_URL).map(remedy -> ". What to do: " + remedy).orElse(""));
        }
        return new SinkException(ErrorCode.CONFIG, context + ": " + error, error);
    }

    /**
     * {@code failure}, after dropping the replication slot when this service created it and the
     * failure came before streaming began: a slot nobody reads keeps the source's WAL from being
     * removed, and the next run creates it again (and loads the tables again).
     */
    private SinkException withSlotCleanup(SinkException failure)
    {
        if (!slotCreatedByThisService || streamingStarted) {
            return failure;
        }
        SourceDatabase source = new SourceDatabase(config.debezium());
        try {
            if (source.dropSlotWhenIdle(SLOT_RELEASE_TIMEOUT_MILLIS)) {
                return new SinkException(failure.errorCode(), failure.getMessage() + " (replication slot "
                        + source.slotName() + ", which this run created before"
                        + " streaming began, was dropped)", failure);
            }
        }
        catch (SQLException e) {
            failure.addSuppressed(SqlFailures.sanitized(e));
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (log.isWarnEnabled()) {
            log.warn("{} - replication slot {} was created by this run, which failed before streaming, and could not "
                    + "be dropped: drop it (pgsink reset) unless pgsink runs"
                    + " again soon, since it keeps the source's WAL", name, source.slotName());
        }
        return failure;
    }

    /** What a change of the captured source tables between two readings of the catalog means to the target. */
    private TableChanges tableChanges(ReadingStore readings)
    {
        CapturedTables captured = config.capturedTables();
        return new TableChanges(table -> captured.captures(table.schema(), table.table()),
                Boolean.parseBoolean(config.debezium().getOrDefault("publish.via.partition.root", "false")),
                sinkConfig.tableNameFormat()::targetOf, readings);
    }

    private SinkException slotCreationTimedOut(SlotCreationWatch slotWatch)
    {
        return new SinkException(ErrorCode.CONFIG,
                "Creating replication slot " + config.debezium().getOrDefault("slot.name",
                name) + " on " + config.sourceDescription()
                + " did not finish within " + config.slotCreationTimeoutMillis() + " ms ("
                        + StandaloneConfig.SLOT_CREATION_TIMEOUT_MS
                        + "): PostgreSQL waits for open transactions to end: "
                + slotWatch.blockers() + ". End them (COMMIT, ROLLBACK or SELECT pg_terminate_backend(pid)) or raise "
                        + StandaloneConfig.SLOT_CREATION_TIMEOUT_MS + ", then start pgsink again");
    }

    private void startEndpoints()
    {
        if (config.httpPort() >= 0) {
            try {
                http = HttpEndpoint.start(config.httpHost(), config.httpPort(), config.httpSecurity(), metrics::scrape,
                        this::health);
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
            ProgressLog progressLog = new ProgressLog(metrics, () -> {
                SinkChangeConsumer current = consumer.get();
                return current == null ? "" : current.lastPosition();
            });
            executor.scheduleAtFixedRate(progressLog::log, config.progressIntervalMillis(),
                    config.progressIntervalMillis(), TimeUnit.MILLISECONDS);
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
        return state.health();
    }

    public ServiceState.State state()
    {
        return state.state();
    }

    /** The HTTP endpoint's port, or -1 when it is disabled or not started. */
    public int httpPort()
    {
        HttpEndpoint endpoint = http;
        return endpoint == null ? -1 : endpoint.port();
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
