package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Workload;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.MergeApplier;
import org.apache.kafka.connect.sink.SinkRecord;

import java.util.Optional;

/**
 * pgsink fed the same Kafka Connect records as the Debezium JDBC sink: each record goes through
 * the connector's {@link DebeziumRecordMapper} (Connect {@code Struct} to row values) into the
 * buffer, so the comparison with the Debezium JDBC sink starts from the same input. The position
 * is the record's Kafka offset, stored with every flush as the Kafka Connect task does.
 */
final class PgsinkConnectMethod
        implements Method
{
    @Override
    public String name()
    {
        return "pgsink (Connect records)";
    }

    @Override
    public void prepare(Workload workload)
    {
        workload.connectRecords();
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
    {
        SinkConfig config = PgsinkMethod.config(database, table, batchSize);
        DebeziumRecordMapper mapper = new DebeziumRecordMapper();
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config))) {
            for (SinkRecord record : workload.connectRecords()) {
                SourcePosition position = new SourcePosition(record.topic() + "-" + record.kafkaPartition(),
                        Long.toString(record.kafkaOffset()));
                Optional<ChangeEvent> event = mapper.map(record, position);
                if (event.isPresent()) {
                    sink.accept(event.get());
                }
            }
            sink.flush();
        }
    }
}
