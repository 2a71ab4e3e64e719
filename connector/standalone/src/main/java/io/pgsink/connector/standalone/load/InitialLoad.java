package io.pgsink.connector.standalone.load;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnProjection;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.LoadTargets;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.LoadProgress;
import io.pgsink.merge.state.LoadProgressStore;
import io.pgsink.merge.state.SourceTableStore;
import io.pgsink.merge.table.TargetTable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static java.util.Objects.requireNonNull;

/**
 * The initial load: copies the captured source tables into the target at one snapshot that matches
 * the replication slot's start, COPY to COPY ({@link ChunkCopier}), tables and chunks in parallel,
 * so that Debezium then streams from the slot with no snapshot of its own.
 *
 * <p>A fresh load creates the publication (if Debezium would create it) and then the slot with an
 * exported snapshot, empties the target tables and records the slot's consistent point, then copies
 * every chunk, each in one target transaction with its progress row, and finally marks the load
 * complete.
 *
 * <p>After a crash during the load, the slot still stands at its consistent point (nothing streamed
 * yet), but its exported snapshot died with the process. Tables whose chunks all committed stay as
 * they are. Every other table (with every table routed to the same target table) is emptied and
 * copied again at a new snapshot, exported by a temporary slot; the progress table records that
 * snapshot for those tables, and {@link LoadedChanges} keeps the stream from applying to them the
 * transactions that snapshot already shows. If the slot is gone, the load starts from scratch.
 *
 * <p>{@link #run} runs on the service's thread; {@link #stop} may be called from any thread.
 */
public final class InitialLoad
{
    private static final Logger log = LoggerFactory.getLogger(InitialLoad.class);

    private final LoadSettings settings;
    private final TargetConnector targetConnector;
    private final LoadListener listener;
    private final LoadProgressStore progressStore;
    private final SourceTableStore sourceTables;
    private final String name;
    private volatile boolean stopping;

    public InitialLoad(LoadSettings settings, TargetConnector targetConnector, LoadListener listener)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.targetConnector = requireNonNull(targetConnector, "targetConnector is null");
        this.listener = requireNonNull(listener, "listener is null");
        this.progressStore = new LoadProgressStore(settings.sink());
        this.sourceTables = new SourceTableStore(settings.sink());
        this.name = settings.sink().sinkName();
    }

    /**
     * Loads what is not loaded yet, or nothing.
     *
     * @param positionsStored whether the target holds stream positions of this sink: without a
     *         load in progress, the sink streams already and nothing is loaded
     * @return the changes the stream must skip
     */
    public LoadedChanges run(boolean positionsStored)
            throws SQLException, InterruptedException
    {
        try (Connection target = targetConnector.connect()) {
            target.setAutoCommit(false);
            Dialect dialect = LoadTargets.dialect(target, settings.sink().targetDialect());
            progressStore.createTable(target, dialect);
            sourceTables.createTable(target, dialect);
            LoadProgress progress = progressStore.read(target);
            target.commit();
            if (progress.complete() && !positionsStored && !slotExists()) {
                // loaded, but the slot the stream was to start from is gone (dropped, or pgsink reset):
                // the changes since the load are lost to it, so the load starts over at a new slot
                log.warn("{} - the initial load completed, but replication slot {} is gone and no stream position is "
                        + "stored: loading again", name, settings.slotName());
                progressStore.clear(target);
                target.commit();
                progress = progressStore.read(target);
                target.commit();
            }
            else if (progress.complete() || (progress.startLsn().isEmpty() && positionsStored)) {
                return LoadedChanges.of(progress);
            }
            load(target, dialect, progress);
            LoadProgress loaded = progressStore.read(target);
            target.commit();
            return LoadedChanges.of(loaded);
        }
    }

    private boolean slotExists()
            throws SQLException
    {
        try (Connection admin = settings.source().connect("pgsink initial load", false)) {
            return ExportedSnapshot.slotActive(admin, settings.slotName()).isPresent();
        }
    }

    private void load(Connection target, Dialect dialect, LoadProgress progress)
            throws SQLException, InterruptedException
    {
        boolean resume;
        ExportedSnapshot snapshot;
        try (Connection admin = settings.source().connect("pgsink initial load", false)) {
            Optional<Boolean> slotActive = ExportedSnapshot.slotActive(admin, settings.slotName());
            if (slotActive.orElse(false)) {
                throw new SinkException(ErrorCode.TRANSIENT,
                        "Replication slot " + settings.slotName()
                        + " is in use by another connection; the initial load waits for it to be released");
            }
            resume = progress.startLsn().isPresent() && slotActive.isPresent();
            if (resume) {
                log.info("{} - resuming the initial load started at {}: tables loaded completely stay, the others are "
                        + "loaded again at a new snapshot", name, progress.startLsn().get());
                // unique: the temporary slot of a killed run may linger until the server notices its connection is gone
                String prefix = settings.slotName().length() > 50 ? settings.slotName().substring(0,
                        50) : settings.slotName();
                String temporary = prefix + "_load_" + String.format("%06x",
                        ThreadLocalRandom.current().nextInt(1 << 24));
                snapshot = ExportedSnapshot.create(settings.source().connect("pgsink initial load", true), temporary,
                        true, false,
                        settings.slotCreationTimeoutMillis());
            }
            else {
                if (slotActive.isPresent()) {
                    log.warn("{} - replication slot {} exists but no load or stream position of this sink is stored "
                            + "in the target: dropping it to start the load at a new slot",
                            name, settings.slotName());
                    ExportedSnapshot.dropSlot(admin, settings.slotName());
                }
                Publications.ensure(admin, settings);
                snapshot = ExportedSnapshot.create(settings.source().connect("pgsink initial load", true),
                        settings.slotName(), false, settings.failoverSlot(), settings.slotCreationTimeoutMillis());
            }
        }
        try (snapshot) {
            List<SourceTable> sources;
            String snapshotText;
            boolean tidRanges;
            boolean sameServers;
            try (Connection reader = settings.source().connect("pgsink initial load", false)) {
                snapshot.importInto(reader);
                sources = SourceCatalog.read(reader, settings.captured());
                snapshotText = SourceCatalog.snapshot(reader);
                tidRanges = SourceCatalog.scansTidRanges(reader);
                sameServers = dialect.equals(Dialect.POSTGRESQL)
                        && reader.getMetaData().getDatabaseMajorVersion() ==
                        target.getMetaData().getDatabaseMajorVersion();
                reader.commit();
            }
            List<LoadTable> plans = new ArrayList<>();
            for (SourceTable source : sources) {
                TableId targetId = settings.routing().apply(source.schema().table());
                // the columns the sink writes, renamed: what streaming will write
                ColumnProjection projection = settings.sink().columnSelection().project(source.schema());
                TargetTable targetTable;
                try {
                    targetTable = LoadTargets.prepare(target, dialect, targetId, projection.target(),
                            settings.sink().evolvesSchema(), settings.sink().changeMetadata());
                }
                catch (SQLException e) {
                    if (!SqlFailures.isAccessFailure(e)) {
                        throw e;
                    }
                    throw targetAccessFailure(e, "Cannot prepare target table " + targetId + " for "
                            + source.schema().table(), settings.sink().evolvesSchema()
                            ? " (schema.evolution=add-columns creates a missing table, which needs CREATE on its "
                                    + "schema, and adds missing columns, which needs the table's ownership)"
                            : "");
                }
                LoadFormat format = settings.format().forTable(source.builtInTypes(), sameServers);
                plans.add(LoadTable.plan(source, projection, targetTable, format, settings.chunkBytes(), tidRanges,
                        settings.sink().appendOnlyWithoutKey()));
            }
            target.commit();
            List<LoadTable> toLoad = resume ? incomplete(plans, progress) : plans;
            List<TableId> targets = new ArrayList<>(new
                    LinkedHashSet<>(toLoad.stream().map(LoadTable::target).toList()));
            if (resume) {
                progressStore.forget(target, toLoad.stream().map(LoadTable::id).toList());
            }
            else {
                progressStore.clear(target);
                progressStore.started(target, snapshot.lsn(), snapshotText);
                // a load from scratch: what the source tables were before it is of no concern to its target
                sourceTables.clear(target);
            }
            try {
                LoadTargets.truncate(target, targets);
            }
            catch (SQLException e) {
                if (!SqlFailures.isAccessFailure(e)) {
                    throw e;
                }
                throw targetAccessFailure(e, "Cannot empty the target tables " + targets
                        + " for the initial load", " (the initial load empties each table with TRUNCATE first)");
            }
            target.commit();
            long binary = toLoad.stream().filter(plan -> plan.format() == LoadFormat.BINARY).count();
            log.info("{} - initial load of {} table(s) into {} at {} ({} already loaded), {} chunk(s), parallelism "
                    + "{}, {} in binary format, {} in text format (initial.load.copy.format {})", name, toLoad.size(),
                    settings.sink().targetUrl(), snapshot.lsn(), plans.size() - toLoad.size(),
                            toLoad.stream().mapToInt(LoadTable::chunks).sum(), settings.parallelism(), binary,
                    toLoad.size() - binary, settings.format().name().toLowerCase());
            copy(toLoad, snapshot, snapshotText);
            progressStore.completed(target);
            target.commit();
        }
    }

    /**
     * The target refused the login, a privilege or the database for {@code context}: the service
     * stops saying what to do, in the words {@code MergeApplier} uses for its own statements.
     */
    private static SinkException targetAccessFailure(SQLException e, String context, String hint)
    {
        String remedy = SqlFailures.remedy(e, SinkConfig.TARGET_USER, SinkConfig.TARGET_PASSWORD,
                SinkConfig.TARGET_URL).orElseThrow();
        return SqlFailures.translate(e, ErrorCode.CONFIG, context, ". What to do: " + remedy + hint);
    }

    /** The plans whose table, or a table routed to the same target table, is not completely loaded. */
    private static List<LoadTable> incomplete(List<LoadTable> plans, LoadProgress progress)
    {
        Set<TableId> incompleteTargets = new HashSet<>();
        for (LoadTable plan : plans) {
            LoadProgress.TableProgress tableProgress = progress.tables().get(plan.id());
            if (tableProgress == null || !tableProgress.complete()) {
                incompleteTargets.add(plan.target());
            }
        }
        return plans.stream().filter(plan -> incompleteTargets.contains(plan.target())).toList();
    }

    private void copy(List<LoadTable> tables, ExportedSnapshot snapshot, String snapshotText)
            throws SQLException, InterruptedException
    {
        LoadProgressLog progress = new LoadProgressLog(name, tables);
        ConcurrentLinkedQueue<ChunkCopier.Chunk> queue = new ConcurrentLinkedQueue<>();
        // the largest tables first, so that the longest copies start early
        tables.stream().sorted(Comparator.comparingLong((LoadTable table) -> table.source().bytes()).reversed())
                .forEach(table -> {
                    for (int chunk = 0; chunk < table.chunks(); chunk++) {
                        queue.add(new ChunkCopier.Chunk(table, chunk));
                    }
                });
        int workers = Math.max(1, Math.min(settings.parallelism(), queue.size()));
        ChunkCopier copier = new ChunkCopier(settings.source(), targetConnector, snapshot, snapshotText, progressStore,
                progress, listener);
        ExecutorService executor = Executors.newFixedThreadPool(workers, runnable -> new Thread(runnable,
                "pgsink-load-" + name));
        ScheduledExecutorService reporter = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-load-progress");
            thread.setDaemon(true);
            return thread;
        });
        if (settings.progressIntervalMillis() > 0) {
            reporter.scheduleAtFixedRate(progress::log, settings.progressIntervalMillis(),
                    settings.progressIntervalMillis(), TimeUnit.MILLISECONDS);
        }
        Map<Future<?>, Integer> futures = new HashMap<>();
        try {
            for (int i = 0; i < workers; i++) {
                futures.put(executor.submit(() -> {
                    try {
                        copier.run(queue, () -> stopping);
                    }
                    catch (SQLException | RuntimeException e) {
                        // the other workers stop after their current chunk
                        stopping = true;
                        throw e;
                    }
                    return null;
                }), i);
            }
            Throwable failure = null;
            for (Future<?> future : futures.keySet()) {
                try {
                    future.get();
                }
                catch (ExecutionException e) {
                    if (failure == null) {
                        failure = e.getCause();
                    }
                    else {
                        failure.addSuppressed(e.getCause());
                    }
                }
            }
            if (failure instanceof SQLException sql) {
                throw sql;
            }
            if (failure instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (failure != null) {
                throw new SinkException(ErrorCode.DATA, "Initial load failed: " + failure, failure);
            }
            if (stopping) {
                throw new InterruptedException("The initial load was stopped");
            }
            progress.finished();
        }
        finally {
            // workers still copying (after a failure here) stop after their current chunk
            stopping = true;
            executor.shutdownNow();
            reporter.shutdownNow();
            executor.awaitTermination(60, TimeUnit.SECONDS);
        }
    }

    /** Stops the load after the chunks being copied; {@link #run} then ends with {@link InterruptedException}. */
    public void stop()
    {
        stopping = true;
    }
}
