package io.pgsink.connector.standalone;

import io.pgsink.copy.SqlFailures;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
import io.pgsink.core.TableId;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.Objects.requireNonNull;

/**
 * Reads the source's tables ({@link SourceTables}) when streaming starts and every
 * {@code intervalMillis} after, on a thread and a source connection of its own, and acts on what
 * {@link TableChanges} finds between two readings: logs the warnings, keeps the first stop as the
 * {@link #failure()} the consumer throws at its next batch, and the renames to stop at. The first
 * change of a table the last reading did not know by that name is checked against a reading made
 * at once, so that a change under a captured table's new name is never applied before the rename
 * is seen. What happened while the service was stopped is not seen: the first reading is the
 * baseline.
 *
 * <p>Thread-safe: the watch thread and the engine's thread share it.
 */
final class SourceTableWatch
        implements SourceTableCheck, AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(SourceTableWatch.class);

    private final String sinkName;
    private final SourceDatabase source;
    private final TableChanges changes;
    private final ScheduledExecutorService executor;
    private final Map<TableId, String> renamed = new ConcurrentHashMap<>();
    private final AtomicReference<SinkException> failure = new AtomicReference<>();
    /** The last reading; guarded by {@code this}. */
    private SourceTables previous;
    /** Guarded by {@code this}. */
    @Nullable
    private Connection connection;

    private SourceTableWatch(String sinkName, SourceDatabase source, TableChanges changes)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.source = requireNonNull(source, "source is null");
        this.changes = requireNonNull(changes, "changes is null");
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-source-tables");
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Reads the tables now and every {@code intervalMillis} from then on.
     *
     * @throws SinkException ({@link ErrorCode#TRANSIENT} where retrying may help) when the first reading fails
     */
    static SourceTableWatch start(String sinkName, SourceDatabase source, TableChanges changes, long intervalMillis)
    {
        SourceTableWatch watch = new SourceTableWatch(sinkName, source, changes);
        synchronized (watch) {
            watch.previous = watch.read();
            watch.act(changes.initial(watch.previous));
        }
        watch.executor.scheduleWithFixedDelay(watch::checkQuietly, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
        return watch;
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

    private synchronized void check()
    {
        SourceTables current = read();
        List<TableChanges.Finding> findings = changes.compare(previous, current);
        previous = current;
        act(findings);
    }

    private synchronized void act(List<TableChanges.Finding> findings)
    {
        for (TableChanges.Finding finding : findings) {
            switch (finding.kind()) {
                case WARNING -> log.warn("{} - {}", sinkName, finding.message());
                case STOP_AT_FIRST_CHANGE -> {
                    log.warn("{} - {} (stopping at its first change)", sinkName, finding.message());
                    renamed.put(finding.table(), finding.message());
                }
                case STOP -> {
                    if (failure.compareAndSet(null, new SinkException(ErrorCode.SCHEMA_MISMATCH, finding.message()))) {
                        log.warn("{} - stopping at the next batch of changes: {}", sinkName, finding.message());
                    }
                }
            }
        }
    }

    private synchronized SourceTables read()
    {
        try {
            if (connection == null || connection.isClosed()) {
                connection = source.connect("pgsink table watch", false);
            }
            return SourceTables.read(connection);
        }
        catch (SQLException e) {
            closeConnection();
            throw SqlFailures.translate(e, ErrorCode.TRANSIENT, "Cannot read the source's tables from its catalog");
        }
    }

    private synchronized void closeConnection()
    {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (SQLException e) {
                log.debug("{} - closing the table watch's source connection failed: {}", sinkName, e.toString());
            }
            connection = null;
        }
    }

    @Override
    public void close()
    {
        executor.shutdownNow();
        closeConnection();
    }
}
