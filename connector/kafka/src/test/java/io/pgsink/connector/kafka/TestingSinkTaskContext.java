package io.pgsink.connector.kafka;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

/** A {@link SinkTaskContext} that records what the task asks of Connect, for driving a task by hand. */
final class TestingSinkTaskContext
        implements SinkTaskContext
{
    private final Map<String, String> configs;
    @Nullable
    private final RecordingReporter reporter;
    final Map<TopicPartition, Long> rewinds = new HashMap<>();
    final Set<TopicPartition> assignment = new HashSet<>();
    final Set<TopicPartition> paused = new HashSet<>();
    long timeout = -1;

    TestingSinkTaskContext(Map<String, String> configs, @Nullable RecordingReporter reporter)
    {
        this.configs = Map.copyOf(configs);
        this.reporter = reporter;
    }

    @Override
    public Map<String, String> configs()
    {
        return configs;
    }

    @Override
    public void offset(Map<TopicPartition, Long> offsets)
    {
        rewinds.putAll(offsets);
    }

    @Override
    public void offset(TopicPartition partition, long offset)
    {
        rewinds.put(partition, offset);
    }

    @Override
    public void timeout(long timeoutMs)
    {
        timeout = timeoutMs;
    }

    @Override
    public Set<TopicPartition> assignment()
    {
        return assignment;
    }

    @Override
    public void pause(TopicPartition... partitions)
    {
        paused.addAll(List.of(partitions));
    }

    @Override
    public void resume(TopicPartition... partitions)
    {
        List.of(partitions).forEach(paused::remove);
    }

    @Override
    public void requestCommit() {}

    @Override
    public ErrantRecordReporter errantRecordReporter()
    {
        return reporter;
    }

    @Override
    public PluginMetrics pluginMetrics()
    {
        throw new UnsupportedOperationException("no metrics in tests");
    }

    /** Keeps what the task reports, as Connect's dead-letter queue would. */
    static final class RecordingReporter
            implements ErrantRecordReporter
    {
        final List<SinkRecord> records = new ArrayList<>();
        final List<Throwable> errors = new ArrayList<>();
        /** The thread of each report: Connect's own reporter is not safe to call from another thread than the task's. */
        final List<Thread> threads = new ArrayList<>();

        @Override
        public Future<Void> report(SinkRecord record, Throwable error)
        {
            records.add(record);
            errors.add(error);
            threads.add(Thread.currentThread());
            return CompletableFuture.completedFuture(null);
        }
    }
}
