package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.TableId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts what an initial load copied, per table, and logs it: one line per table still loading
 * every {@code initial.load.progress.interval.ms} (rows, bytes, rate since the last line, chunks,
 * estimated time left), one line when a table completes, one for the whole load. Counters are
 * updated by the worker threads; {@link #log} runs on a scheduler thread.
 */
final class LoadProgressLog
{
    private static final Logger log = LoggerFactory.getLogger(LoadProgressLog.class);

    private final String sinkName;
    private final Map<TableId, TableCounters> tables = new LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private long lastNanos = startNanos;

    LoadProgressLog(String sinkName, List<LoadTable> loads)
    {
        this.sinkName = sinkName;
        for (LoadTable load : loads) {
            tables.put(load.id(), new TableCounters(load));
        }
    }

    void bytesSent(TableId table, int bytes)
    {
        tables.get(table).bytes.addAndGet(bytes);
    }

    void chunkLoaded(TableId table, long rows)
    {
        TableCounters counters = tables.get(table);
        counters.rows.addAndGet(rows);
        if (counters.chunksDone.incrementAndGet() == counters.load.chunks()) {
            double seconds = Math.max(1e-3, (System.nanoTime() - startNanos) / 1e9);
            log.info("{} - initial load of {} complete: {} rows, {} MB in {} s since the load started", sinkName, table,
                    counters.rows.get(),
                    counters.bytes.get() / 1_000_000, Math.round(seconds));
        }
    }

    synchronized void log()
    {
        long now = System.nanoTime();
        double interval = Math.max(1e-3, (now - lastNanos) / 1e9);
        double elapsed = Math.max(1e-3, (now - startNanos) / 1e9);
        lastNanos = now;
        for (Map.Entry<TableId, TableCounters> entry : tables.entrySet()) {
            TableCounters counters = entry.getValue();
            int done = counters.chunksDone.get();
            if (done == counters.load.chunks()) {
                continue;
            }
            long rows = counters.rows.get();
            long bytes = counters.bytes.get();
            long rowRate = Math.round((rows - counters.loggedRows) / interval);
            long byteRate = Math.round((bytes - counters.loggedBytes) / interval);
            counters.loggedRows = rows;
            counters.loggedBytes = bytes;
            long estimated = counters.load.source().estimatedRows();
            String eta = "unknown";
            if (estimated > 0 && rows > 0) {
                double fraction = Math.min(0.99, (double) rows / estimated);
                eta = Math.round(elapsed * (1 - fraction) / fraction) + " s";
            }
            log.info("{} - initial load of {}: {} of ~{} rows, {} MB, {} rows/s, {} MB/s, {}/{} chunks, about {} left",
                    sinkName, entry.getKey(), rows,
                    Math.max(estimated, 0), bytes / 1_000_000, rowRate, byteRate / 1_000_000, done,
                            counters.load.chunks(), eta);
        }
    }

    void finished()
    {
        long rows = 0;
        long bytes = 0;
        for (TableCounters counters : tables.values()) {
            rows += counters.rows.get();
            bytes += counters.bytes.get();
        }
        double seconds = Math.max(1e-3, (System.nanoTime() - startNanos) / 1e9);
        log.info("{} - initial load complete: {} tables, {} rows, {} MB in {} s ({} rows/s)", sinkName, tables.size(),
                rows, bytes / 1_000_000,
                String.format("%.1f", seconds), Math.round(rows / seconds));
    }

    private static final class TableCounters
    {
        private final LoadTable load;
        private final AtomicLong rows = new AtomicLong();
        private final AtomicLong bytes = new AtomicLong();
        private final AtomicInteger chunksDone = new AtomicInteger();
        private long loggedRows;
        private long loggedBytes;

        private TableCounters(LoadTable load)
        {
            this.load = load;
        }
    }
}
