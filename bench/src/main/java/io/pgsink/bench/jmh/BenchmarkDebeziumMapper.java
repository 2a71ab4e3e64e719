package io.pgsink.bench.jmh;

import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.ConnectRecords;
import io.pgsink.bench.workload.Workload;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Debezium record to core event mapping: records per second through the connector's
 * {@link DebeziumRecordMapper} (the Kafka Connect {@code Struct} of a Debezium envelope to a pgsink
 * {@code ChangeEvent}), the step the Kafka Connect sink and the standalone service add in front of
 * the merge buffer. The records are S2's mix (inserts, updates, deletes with a key-only before
 * image) of the narrow 5-column or the wide 30-column table ({@link ConnectRecords}), built once.
 *
 * <pre>java -jar bench/target/benchmarks.jar BenchmarkDebeziumMapper -prof gc</pre>
 */
@State(Scope.Thread)
@Fork(2)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BenchmarkDebeziumMapper
{
    static final int RECORDS = 10_000;

    /** 5: the narrow table; 30: the wide one (with three large text columns). */
    @Param({"5", "30"})
    public int columns;

    private List<SinkRecord> records;
    private SourcePosition[] positions;
    private DebeziumRecordMapper mapper;

    @Setup(Level.Trial)
    public void setUp()
    {
        Columns shape = switch (columns) {
            case 5 -> Columns.NARROW;
            case 30 -> Columns.WIDE;
            default -> throw new IllegalArgumentException("columns must be 5 or 30, not " + columns);
        };
        records = Workload.mixed("mapper", shape, RECORDS, RECORDS, 42).connectRecords();
        positions = new SourcePosition[RECORDS];
        for (int i = 0; i < RECORDS; i++) {
            positions[i] = new SourcePosition("bench", Integer.toString(i));
        }
        mapper = new DebeziumRecordMapper();
    }

    /** Returns how many records mapped to an event (every one of the workload's should). */
    @Benchmark
    @OperationsPerInvocation(RECORDS)
    public int mapRecords(Blackhole blackhole)
    {
        int mapped = 0;
        for (int i = 0; i < RECORDS; i++) {
            Optional<ChangeEvent> event = mapper.map(records.get(i), positions[i]);
            if (event.isPresent()) {
                mapped++;
            }
            blackhole.consume(event);
        }
        return mapped;
    }
}
