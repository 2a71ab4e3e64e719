package io.pgsink.connector.standalone.monitoring;

import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.pgsink.connector.standalone.load.LoadListener;
import io.pgsink.connector.standalone.verify.VerifyListener;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.TableId;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;

/**
 * The service's Micrometer meters, exposed in Prometheus format at {@code /metrics}:
 * <ul>
 * <li>{@code pgsink_events_in_total}: records received from the source (changes and position-only records);</li>
 * <li>{@code pgsink_rows_applied_total{table, operation}}: merged rows written ({@code upsert}) or deleted ({@code
 * delete}) per source table;</li>
 * <li>{@code pgsink_truncates_total{table}};</li>
 * <li>{@code pgsink_flush_seconds}: flush latency histogram (one target transaction each);</li>
 * <li>{@code pgsink_flush_failures_total};</li>
 * <li>{@code pgsink_copy_bytes_total}: CSV bytes sent with COPY;</li>
 * <li>{@code pgsink_buffer_bytes}: estimated heap of the rows buffered for the next flush;</li>
 * <li>{@code pgsink_source_lag_seconds}: at the last flush, how long after its source commit the newest change was
 * applied;</li>
 * <li>{@code pgsink_state{state}}: 1 for the service's current {@link ServiceState.State}, 0 for the others;</li>
 * <li>{@code pgsink_initial_load_rows_total{table}} and {@code pgsink_initial_load_bytes_total{table}}: rows and COPY
 * bytes the initial load committed per source table;</li>
 * <li>{@code pgsink_verify_*{table}}: with {@code pgsink verify} and {@code pgsink repair --http-port}, each
 * table's key ranges (total and compared), source rows compared, differing keys found and elapsed time;</li>
 * <li>{@code hikaricp_*{pool="pgsink-<sink>"}}: the target connection pool (connections active, idle and pending,
 * acquire, usage and creation times, timeouts).</li>
 * </ul>
 * Counters are thread-safe; {@link #flushed} runs on the sink's thread.
 */
public final class SinkMetrics
        implements FlushListener, LoadListener, VerifyListener
{
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final String sinkName;
    private final Counter eventsIn;
    private final Counter copyBytes;
    private final Counter flushFailures;
    private final Timer flushTimer;
    private final AtomicLong bufferBytes = new AtomicLong();
    private final AtomicLong lagMillis = new AtomicLong();
    private final Map<TableId, TableCounters> tables = new ConcurrentHashMap<>();
    private final AtomicLong rowsApplied = new AtomicLong();
    private final Map<TableId, Counter[]> loadCounters = new ConcurrentHashMap<>();
    private final Map<TableId, AtomicReference<VerifySnapshot>> verifyProgress = new ConcurrentHashMap<>();

    public SinkMetrics(String sinkName)
    {
        this.sinkName = sinkName;
        registry.config().commonTags("sink", sinkName);
        eventsIn =
                Counter.builder("pgsink.events.in").description("Records received from the source").register(registry);
        copyBytes = Counter.builder("pgsink.copy.bytes").description("CSV bytes sent to the target with COPY")
                .baseUnit("bytes").register(registry);
        flushFailures = Counter.builder("pgsink.flush.failures").description("Flushes that failed (and were retried "
                + "or stopped the sink)").register(registry);
        flushTimer = Timer.builder("pgsink.flush").description("Flush latency: one target transaction each")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(5))
                .register(registry);
        Gauge.builder("pgsink.buffer.bytes", bufferBytes,
                AtomicLong::get).description("Estimated heap of buffered rows").baseUnit("bytes").register(registry);
        Gauge.builder("pgsink.source.lag", lagMillis,
                value -> value.get() / 1000.0).description("Time from source commit to target commit of the newest "
                + "change applied").baseUnit("seconds").register(registry);
    }

    /** {@code pgsink_state{state="..."}}: 1 for the current state, 0 for every other. */
    public void stateGauges(ServiceState state)
    {
        String states = Arrays.stream(ServiceState.State.values()).map(Enum::name).collect(Collectors.joining(", "));
        for (ServiceState.State each : ServiceState.State.values()) {
            Gauge.builder("pgsink.state", state, current -> current.state() == each ? 1 : 0).tag("state", each.name())
                    .description("1 for the service's current state (" + states + "), 0 for the others")
                    .register(registry);
        }
    }

    public void eventsIn(long count)
    {
        eventsIn.increment(count);
    }

    public void copiedBytes(long bytes)
    {
        copyBytes.increment(bytes);
    }

    public void bufferBytes(long bytes)
    {
        bufferBytes.set(bytes);
    }

    public void lagMillis(long millis)
    {
        lagMillis.set(Math.max(0, millis));
    }

    @Override
    public void flushed(Batch batch, long elapsedNanos)
    {
        flushTimer.record(elapsedNanos, TimeUnit.NANOSECONDS);
        for (TableBatch table : batch.tables()) {
            TableCounters counters = tables.computeIfAbsent(table.table(), this::counters);
            long upserts = table.upserts();
            counters.upserts.increment(upserts);
            counters.deletes.increment(table.changes().size() - upserts);
            if (table.truncate()) {
                counters.truncates.increment();
            }
            rowsApplied.addAndGet(table.changes().size());
        }
    }

    @Override
    public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
    {
        flushFailures.increment();
    }

    @Override
    public void chunkLoaded(TableId table, long rows, long bytes)
    {
        Counter[] counters = loadCounters.computeIfAbsent(table, id -> new Counter[] {
                Counter.builder("pgsink.initial.load.rows").tag("table",
                        id.schema() + "."
                        + id.table()).description("Rows the initial load committed").register(registry),
                Counter.builder("pgsink.initial.load.bytes").tag("table", id.schema() + "." + id.table())
                        .description("COPY bytes the initial load committed").baseUnit("bytes").register(registry)});
        counters[0].increment(rows);
        counters[1].increment(bytes);
    }

    @Override
    public void progressed(TableProgress progress)
    {
        VerifySnapshot snapshot = new VerifySnapshot(progress, System.nanoTime());
        verifyProgress.computeIfAbsent(progress.table(), table -> verifyGauges(table, snapshot)).set(snapshot);
    }

    /** Registers the gauges of {@code table}'s verify progress, which never reads null. */
    private AtomicReference<VerifySnapshot> verifyGauges(TableId table, VerifySnapshot first)
    {
        AtomicReference<VerifySnapshot> progress = new AtomicReference<>(first);
        String name = table.schema() + "." + table.table();
        verifyGauge("pgsink.verify.ranges", name, progress, TableProgress::rangesTotal,
                "Key ranges the table is cut into (0 until all are cut)");
        verifyGauge("pgsink.verify.ranges.done", name, progress, TableProgress::rangesDone, "Key ranges compared");
        verifyGauge("pgsink.verify.rows.compared", name, progress, TableProgress::rowsCompared,
                "Source rows in the key ranges compared");
        verifyGauge("pgsink.verify.differing.keys", name, progress, TableProgress::differingKeys,
                "Keys found differing so far, before they are re-checked");
        Gauge.builder("pgsink.verify.elapsed", progress, current -> current.get().elapsedSeconds(System.nanoTime()))
                .tag("table", name).baseUnit("seconds")
                .description("Time the table's comparison took, or has taken so far").register(registry);
        return progress;
    }

    private void verifyGauge(String meter, String table, AtomicReference<VerifySnapshot> progress,
            ToDoubleFunction<TableProgress> value, String description)
    {
        Gauge.builder(meter, progress, current -> value.applyAsDouble(current.get().progress())).tag("table", table)
                .description(description).register(registry);
    }

    /** A table's verify progress as reported at {@code atNanos}. */
    private record VerifySnapshot(TableProgress progress, long atNanos)
    {
        /** Until the table's last range is compared, its elapsed time goes on. */
        double elapsedSeconds(long nowNanos)
        {
            boolean done = progress.rangesTotal() > 0 && progress.rangesDone() == progress.rangesTotal();
            long millis = progress.elapsedMillis() + (done ? 0 : (nowNanos - atNanos) / 1_000_000);
            return millis / 1000.0;
        }
    }

    /** Registers {@code table}'s meters, as its first flush does. */
    void tableCounters(TableId table)
    {
        tables.computeIfAbsent(table, this::counters);
    }

    private TableCounters counters(TableId table)
    {
        String name = table.schema() + "." + table.table();
        return new TableCounters(
                Counter.builder("pgsink.rows.applied").tag("table", name).tag("operation",
                        "upsert").description("Merged rows written to the target").register(registry),
                Counter.builder("pgsink.rows.applied").tag("table", name).tag("operation",
                        "delete").description("Merged rows written to the target").register(registry),
                Counter.builder("pgsink.truncates").tag("table",
                        name).description("Truncates applied").register(registry));
    }

    public long eventsInTotal()
    {
        return (long) eventsIn.count();
    }

    public long initialLoadRowsTotal()
    {
        return loadCounters.values().stream().mapToLong(counters -> (long) counters[0].count()).sum();
    }

    public long rowsAppliedTotal()
    {
        return rowsApplied.get();
    }

    public long flushCount()
    {
        return flushTimer.count();
    }

    public double flushMeanMillis()
    {
        return flushTimer.mean(TimeUnit.MILLISECONDS);
    }

    public long copyBytesTotal()
    {
        return (long) copyBytes.count();
    }

    public double lagSeconds()
    {
        return lagMillis.get() / 1000.0;
    }

    String sinkName()
    {
        return sinkName;
    }

    /**
     * Where the applier's target connection pool reports its meters ({@code
     * hikaricp_connections_*{pool="pgsink-<sink>"}}).
     */
    public MetricsTrackerFactory poolMetrics()
    {
        return new MicrometerMetricsTrackerFactory(registry);
    }

    /** The Prometheus text exposition of every meter. */
    public String scrape()
    {
        return registry.scrape();
    }

    private record TableCounters(Counter upserts, Counter deletes, Counter truncates) {}
}
