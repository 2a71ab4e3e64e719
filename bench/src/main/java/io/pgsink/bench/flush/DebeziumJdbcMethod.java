package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.ConnectRecords;
import io.pgsink.bench.workload.Workload;

import io.debezium.connector.jdbc.JdbcSinkConnectorTask;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * The peer: the Debezium JDBC sink connector ({@code io.debezium:debezium-connector-jdbc}), its
 * {@link JdbcSinkConnectorTask} run in-process and fed the workload's changes as the Kafka Connect
 * records of Debezium's envelope ({@link ConnectRecords}), one {@code put} per batch, as a Connect
 * worker would. Configured at its fastest correct settings: {@code insert.mode=upsert},
 * {@code delete.enabled=true}, {@code primary.key.mode=record_key}, {@code use.reduction.buffer=true}
 * (merges the batch by key, as pgsink does), {@code dialect.postgres.unnest.insert.enabled=true}
 * (one {@code INSERT ... SELECT FROM UNNEST(?::type[], ...)} per flush instead of a JDBC batch),
 * {@code batch.size} = the benchmark's batch, {@code schema.evolution=none}.
 *
 * <p>What it does not do that the other methods do: store the position in the target (a Connect
 * worker commits the consumer offsets to Kafka, outside this timing), and apply a {@code put} in one
 * transaction (it commits the upserts, then the deletes, of each batch separately).
 */
final class DebeziumJdbcMethod
        implements Method
{
    private JdbcSinkConnectorTask task;

    @Override
    public String name()
    {
        return "Debezium JDBC sink 3.6 (upsert, UNNEST)";
    }

    @Override
    public void prepare(Workload workload)
    {
        workload.connectRecords();
    }

    /** Started before the clock: Hibernate's bootstrap takes a second or two, once per worker. */
    @Override
    public void setUp(BenchmarkDatabase database, String table, int batchSize)
    {
        task = new JdbcSinkConnectorTask();
        task.initialize(new Context());
        task.start(config(database, table, batchSize));
        task.open(List.of(new TopicPartition(ConnectRecords.TOPIC, 0)));
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
    {
        requireNonNull(task, "setUp was not called");
        List<SinkRecord> records = workload.connectRecords();
        for (int start = 0; start < records.size(); start += batchSize) {
            task.put(records.subList(start, Math.min(records.size(), start + batchSize)));
            // put() keeps a failure to itself until the next put: look for it after each
            Throwable failure = task.getLastProcessingException();
            if (failure != null) {
                throw new IllegalStateException("The Debezium JDBC sink failed on the batch at offset " + start + ": "
                        + failure, failure);
            }
        }
        // what a worker does before committing the consumer offsets (to Kafka, not timed here)
        task.preCommit(Map.of(new TopicPartition(ConnectRecords.TOPIC, 0), new OffsetAndMetadata(records.size())));
    }

    @Override
    public void tearDown()
    {
        if (task != null) {
            task.stop();
            task = null;
        }
    }

    static Map<String, String> config(BenchmarkDatabase database, String table, int batchSize)
    {
        Map<String, String> config = new HashMap<>();
        config.put("name", "pgsink-bench-debezium-jdbc");
        config.put("topics", ConnectRecords.TOPIC);
        config.put("connection.url", database.url);
        config.put("connection.username", database.user());
        config.put("connection.password", database.password());
        config.put("connection.pool.min_size", "1");
        config.put("connection.pool.max_size", "2");
        config.put("insert.mode", "upsert");
        config.put("delete.enabled", "true");
        config.put("primary.key.mode", "record_key");
        config.put("schema.evolution", "none");
        config.put("use.reduction.buffer", "true");
        config.put("batch.size", String.valueOf(batchSize));
        config.put("dialect.postgres.unnest.insert.enabled", "true");
        // a format without placeholders: every record goes to this table
        config.put("collection.name.format", database.schema + "." + table);
        config.put("quote.identifiers", "false");
        return config;
    }

    /**
     * What the task asks of a Connect worker: nothing it needs here (no errant-record reporter: a failure ends the
     * run).
     */
    private static final class Context
            implements SinkTaskContext
    {
        @Override
        public Map<String, String> configs()
        {
            return Map.of();
        }

        @Override
        public void offset(Map<TopicPartition, Long> offsets) {}

        @Override
        public void offset(TopicPartition partition, long offset) {}

        @Override
        public void timeout(long timeoutMs) {}

        @Override
        public Set<TopicPartition> assignment()
        {
            return Set.of(new TopicPartition(ConnectRecords.TOPIC, 0));
        }

        @Override
        public void pause(TopicPartition... partitions) {}

        @Override
        public void resume(TopicPartition... partitions) {}

        @Override
        public void requestCommit() {}

        @Override
        public PluginMetrics pluginMetrics()
        {
            throw new UnsupportedOperationException("no plugin metrics in the benchmark");
        }
    }
}
