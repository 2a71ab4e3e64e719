package io.pgsink.connector.standalone.monitoring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Supplier;

/**
 * Logs one progress line per {@code progress.interval.ms} while changes flow, and nothing while
 * the source is quiet. Runs on the service's scheduler thread; reads only thread-safe meters.
 */
public final class ProgressLog
{
    private static final Logger log = LoggerFactory.getLogger(ProgressLog.class);

    private final SinkMetrics metrics;
    private final Supplier<String> position;
    private long lastEvents;
    private long lastRows;
    private long lastNanos = System.nanoTime();

    public ProgressLog(SinkMetrics metrics, Supplier<String> position)
    {
        this.metrics = metrics;
        this.position = position;
    }

    public void log()
    {
        long events = metrics.eventsInTotal();
        long rows = metrics.rowsAppliedTotal();
        long now = System.nanoTime();
        if (events != lastEvents) {
            double seconds = Math.max(1e-3, (now - lastNanos) / 1e9);
            log.info("{} - {} events in ({}/s), {} rows applied ({}/s), {} flushes (mean {} ms), {} bytes copied, lag "
                    + "{} s, at {}",
                    metrics.sinkName(), events, Math.round((events - lastEvents) / seconds), rows,
                            Math.round((rows - lastRows) / seconds),
                    metrics.flushCount(), Math.round(metrics.flushMeanMillis()), metrics.copyBytesTotal(),
                            String.format("%.1f", metrics.lagSeconds()), position.get());
        }
        lastEvents = events;
        lastRows = rows;
        lastNanos = now;
    }
}
