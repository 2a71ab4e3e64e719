package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * Reads the source's tables ({@link SourceTables}) when streaming starts and every
 * {@code intervalMillis} after, on a thread of its own, and acts on what {@link TableChanges} finds
 * between two readings: logs the warnings, keeps the first stop as the {@link #failure()} the
 * consumer throws at its next batch, and the renames to stop at. The first change of a table the
 * last reading did not know by that name is checked against a reading made at once, so that a
 * change under a captured table's new name is never applied before the rename is seen.
 *
 * <p>What happened while the service was stopped is found by comparing the first reading with the
 * one stored in the target ({@link ReadingStore}) when the sink resumes from stored positions. The
 * captured tables of each reading are stored as long as nothing that stops the sink was found in
 * this run: a rename still to be stopped at, or a table re-created or partition attached or
 * detached, is never stored, so a stop or crash at any moment finds it again at the next start,
 * however far the stream got. A fresh start (no positions: the tables are loaded or snapshotted
 * anew) takes the catalog as it finds it and stores that.
 *
 * <p>Thread-safe: the watch thread and the engine's thread share it.
 */
public final class SourceTableWatch
        implements SourceTableCheck, AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(SourceTableWatch.class);

    private final String sinkName;
    private final Supplier<SourceTables> reader;
    private final AutoCloseable readerResources;
    private final TableChanges changes;
    private final ReadingStore store;
    private final ScheduledExecutorService executor;
    private final Map<TableId, String> renamed = new ConcurrentHashMap<>();
    private final AtomicReference<SinkException> failure = new AtomicReference<>();
    /** The last reading; guarded by {@code this}. */
    private SourceTables previous;
    /** The captured tables last stored; guarded by {@code this}. */
    @Nullable
    private SourceTables stored;
    /** Whether a change that stops the sink was found: no reading is stored from then on. Guarded by {@code this}. */
    private boolean holding;

    private SourceTableWatch(String sinkName, Supplier<SourceTables> reader, AutoCloseable readerResources,
            TableChanges changes, ReadingStore store)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.reader = requireNonNull(reader, "reader is null");
        this.readerResources = requireNonNull(readerResources, "readerResources is null");
        this.changes = requireNonNull(changes, "changes is null");
        this.store = requireNonNull(store, "store is null");
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-source-tables");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads the tables now, compares them with the stored reading when {@code resuming} (the sink
     * has stored positions), and reads them every {@code intervalMillis} from then on. Closes
     * {@code reader} and {@code store} when it closes, or when it fails to start.
     *
     * @throws SinkException ({@link ErrorCode#TRANSIENT} where retrying may help) when the first reading, or reading or
     * writing the stored one, fails
     */
    public static SourceTableWatch start(String sinkName, SourceTableReader reader, TableChanges changes,
            ReadingStore store, boolean resuming, long intervalMillis)
    {
        SourceTableWatch watch = new SourceTableWatch(sinkName, reader, reader, changes, store);
        watch.begin(resuming);
        watch.executor.scheduleWithFixedDelay(watch::checkQuietly, intervalMillis, intervalMillis,
                TimeUnit.MILLISECONDS);
        return watch;
    }

    /** {@link #start} without the schedule, for tests that call {@link #check()} themselves. */
    static SourceTableWatch startUnscheduled(String sinkName, Supplier<SourceTables> reader, TableChanges changes,
            ReadingStore store, boolean resuming)
    {
        SourceTableWatch watch = new SourceTableWatch(sinkName, reader, () -> {}, changes, store);
        watch.begin(resuming);
        return watch;
    }

    private synchronized void begin(boolean resuming)
    {
        try {
            SourceTables current = reader.get();
            Optional<SourceTables> last = resuming ? store.load() : Optional.empty();
            previous = current;
            stored = last.orElse(null);
            act(last.isPresent() ? changes.sinceStored(last.get(), current) : changes.initial(current));
            // a fresh start's reading is the baseline whatever it found: what it found is checked at every start anyway
            if (last.isEmpty() || !holding) {
                accept(current);
            }
        }
        catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void beforeFirstChange(TableId table)
    {
        boolean known;
        synchronized (this) {
            known = previous.byName(table).isPresent();
        }
        if (!known && !renamed.containsKey(table)) {
            check();
        }
        String rename = renamed.get(table);
        if (rename != null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, rename);
        }
    }

    @Override
    public Optional<SinkException> failure()
    {
        return Optional.ofNullable(failure.get());
    }

    private void checkQuietly()
    {
        try {
            check();
        }
        catch (RuntimeException e) {
            // the next reading compares with the last good one; the stream goes on meanwhile
            log.debug("{} - reading the source's tables failed: {}", sinkName, e.toString());
        }
    }

    /** Reads the tables and acts on what changed since the last reading. */
    synchronized void check()
    {
        SourceTables current = reader.get();
        List<TableChanges.Finding> findings = changes.compare(previous, current);
        previous = current;
        act(findings);
        if (!holding) {
            try {
                accept(current);
            }
            catch (RuntimeException e) {
                // the stored reading stays older than the stream, which is safe: the next start finds again what it
                // missed
                log.debug("{} - storing the source's tables in the target failed: {}", sinkName, e.toString());
            }
        }
    }

    private synchronized void accept(SourceTables current)
    {
        SourceTables captured = changes.captured(current);
        if (!captured.equals(stored)) {
            store.store(captured);
            stored = captured;
        }
    }

    private synchronized void act(List<TableChanges.Finding> findings)
    {
        for (TableChanges.Finding finding : findings) {
            switch (finding.kind()) {
                case WARNING -> log.warn("{} - {}", sinkName, finding.message());
                case STOP_AT_FIRST_CHANGE -> {
                    log.warn("{} - {} (stopping at its first change)", sinkName, finding.message());
                    renamed.put(finding.table(), finding.message());
                    holding = true;
                }
                case STOP_AT_OLD_NAME -> renamed.put(finding.table(), finding.message());
                case STOP -> {
                    holding = true;
                    if (failure.compareAndSet(null, new SinkException(ErrorCode.SCHEMA_MISMATCH, finding.message()))) {
                        log.warn("{} - stopping at the next batch of changes: {}", sinkName, finding.message());
                    }
                }
            }
        }
    }

    @Override
    public void close()
    {
        executor.shutdownNow();
        synchronized (this) {
            try {
                readerResources.close();
            }
            catch (Exception e) {
                log.debug("{} - closing the table watch's source connection failed: {}", sinkName, e.toString());
            }
            store.close();
        }
    }
}
