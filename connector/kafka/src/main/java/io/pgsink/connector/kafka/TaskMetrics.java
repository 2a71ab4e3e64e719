package io.pgsink.connector.kafka;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.TableBatch;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Avg;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.metrics.stats.Percentile;
import org.apache.kafka.common.metrics.stats.Percentiles;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.jetbrains.annotations.Nullable;

import java.util.LinkedHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The task's meters, those of the standalone service's {@code /metrics}, registered with the
 * worker's plugin metrics ({@link SinkTaskContext#pluginMetrics()}, Kafka Connect 4.1 and later),
 * which Connect reports over JMX as {@code kafka.connect:type=plugins,connector=<c>,task=<n>}
 * (and to any other metrics reporter the worker has):
 * <ul>
 * <li>{@code events-in-total}: records the task took (changes and position-only records);</li>
 * <li>{@code rows-applied-total}, {@code rows-upserted-total}, {@code rows-deleted-total}: merged rows written or
 * deleted;</li>
 * <li>{@code flushes-total}, {@code flush-failures-total}, {@code flush-time-avg-ms}, {@code flush-time-max-ms},
 * {@code flush-time-p50-ms}, {@code flush-time-p99-ms}: flushes (one target transaction each) and their latency;</li>
 * <li>{@code copy-bytes-total}: CSV bytes sent with COPY;</li>
 * <li>{@code buffer-bytes}: estimated heap of the rows buffered for the next flush;</li>
 * <li>{@code source-lag-ms}: at the last flush, how long after its source commit the newest change was applied;</li>
 * <li>{@code key-change-creates-waiting}: creates of key changes waiting for their old rows (their partitions
 * wait);</li>
 * <li>{@code state}: {@code RUNNING}, {@code RETRYING} (a transient failure is being retried) or {@code FAILED}.</li>
 * </ul>
 * On a worker without plugin metrics (before 4.1) the task has none. Written by the task's thread,
 * read by the reporters' threads.
 */
final class TaskMetrics
{
    static final String GROUP = "pgsink-sink-task";

    enum State
    {
        RUNNING, RETRYING, FAILED
    }

    private final AtomicLong eventsIn = new AtomicLong();
    private final AtomicLong rowsUpserted = new AtomicLong();
    private final AtomicLong rowsDeleted = new AtomicLong();
    private final AtomicLong flushes = new AtomicLong();
    private final AtomicLong flushFailures = new AtomicLong();
    private final AtomicLong copyBytes = new AtomicLong();
    private volatile long bufferBytes;
    private volatile long lagMillis;
    private volatile long waiting;
    private volatile State state = State.RUNNING;
    @Nullable
    private final Sensor flushTime;

    private TaskMetrics(@Nullable PluginMetrics metrics)
    {
        if (metrics == null) {
            flushTime = null;
            return;
        }
        gauge(metrics, "events-in-total", "Records the task took (changes and position-only records)", eventsIn::get);
        gauge(metrics, "rows-applied-total", "Merged rows written to or deleted from the target",
                () -> rowsUpserted.get() + rowsDeleted.get());
        gauge(metrics, "rows-upserted-total", "Merged rows written to the target", rowsUpserted::get);
        gauge(metrics, "rows-deleted-total", "Merged rows deleted from the target", rowsDeleted::get);
        gauge(metrics, "flushes-total", "Flushes committed, one target transaction each", flushes::get);
        gauge(metrics, "flush-failures-total", "Flushes that failed (and were retried or failed the task)",
                flushFailures::get);
        gauge(metrics, "copy-bytes-total", "CSV bytes sent to the target with COPY", copyBytes::get);
        gauge(metrics, "buffer-bytes", "Estimated heap of the rows buffered for the next flush", () -> bufferBytes);
        gauge(metrics, "source-lag-ms",
                "At the last flush, the time from source commit to target commit of the newest change applied",
                () -> lagMillis);
        gauge(metrics, "key-change-creates-waiting",
                "Creates of primary-key changes waiting for their old rows, saved by the flushes of their deletes "
                + "(key.change.wait.ms)", () -> waiting);
        metrics.addMetric(metrics.metricName("state",
                        "RUNNING, RETRYING (a transient failure is being retried) or FAILED", new LinkedHashMap<>()),
                (Gauge<String>) (config, now) -> state.name());
        Sensor sensor = metrics.addSensor("flush-time");
        sensor.add(metrics.metricName("flush-time-avg-ms", "Average flush latency", new LinkedHashMap<>()), new Avg());
        sensor.add(metrics.metricName("flush-time-max-ms", "Maximum flush latency", new LinkedHashMap<>()), new Max());
        sensor.add(new Percentiles(4 * 1024, 300_000, Percentiles.BucketSizing.LINEAR,
                new Percentile(
                        metrics.metricName("flush-time-p50-ms", "Median flush latency", new LinkedHashMap<>()), 50),
                new Percentile(
                        metrics.metricName("flush-time-p99-ms", "99th percentile flush latency", new LinkedHashMap<>()),
                        99)));
        flushTime = sensor;
    }

    /** The task's metrics in the worker's plugin metrics; counted but reported nowhere on a worker without them. */
    static TaskMetrics of(SinkTaskContext context)
    {
        PluginMetrics metrics;
        try {
            metrics = context.pluginMetrics();
        }
        catch (NoSuchMethodError | NoClassDefFoundError | UnsupportedOperationException e) {
            // a worker before Kafka Connect 4.1
            metrics = null;
        }
        return new TaskMetrics(metrics);
    }

    private static void gauge(PluginMetrics metrics, String name, String description,
            java.util.function.LongSupplier value)
    {
        MetricName metricName = metrics.metricName(name, description, new LinkedHashMap<>());
        metrics.addMetric(metricName, (Gauge<Long>) (config, now) -> value.getAsLong());
    }

    void eventsIn(long count)
    {
        eventsIn.addAndGet(count);
    }

    void copiedBytes(int bytes)
    {
        copyBytes.addAndGet(bytes);
    }

    void buffered(long bytes, long waitingCreates)
    {
        bufferBytes = bytes;
        waiting = waitingCreates;
    }

    void flushed(Batch batch, long elapsedNanos, long newestSourceMillis)
    {
        flushes.incrementAndGet();
        for (TableBatch table : batch.tables()) {
            long upserts = table.upserts();
            rowsUpserted.addAndGet(upserts);
            rowsDeleted.addAndGet(table.changes().size() - upserts);
        }
        if (newestSourceMillis > 0) {
            lagMillis = Math.max(0, System.currentTimeMillis() - newestSourceMillis);
        }
        if (flushTime != null) {
            flushTime.record(elapsedNanos / 1_000_000.0);
        }
    }

    void flushFailed()
    {
        flushFailures.incrementAndGet();
    }

    void state(State state)
    {
        this.state = state;
    }
}
