package io.pgsink.bench.jmh;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
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

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Merge-buffer throughput: events accepted per second by {@link BufferedSink} and turned into a
 * batch, with an applier that only hands the batch to a Blackhole. {@code keyCollisionRate} is the
 * share of events that touch a key already buffered.
 *
 * <pre>java -jar bench/target/benchmarks.jar BenchmarkMergeBuffer -prof gc</pre>
 */
@State(Scope.Thread)
@Fork(2)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BenchmarkMergeBuffer
{
    static final int EVENTS = 10_000;

    @Param({"5", "30"})
    public int columns;

    @Param({"0.0", "0.5", "0.9"})
    public double keyCollisionRate;

    private TableSchema schema;
    private long[] keys;
    private Object[][] values;
    private SourcePosition[] positions;

    @Setup(Level.Trial)
    public void setUp()
    {
        Random random = new Random(42);
        List<String> names = new ArrayList<>();
        for (int column = 0; column < columns; column++) {
            names.add(column == 0 ? "id" : "c" + column);
        }
        schema = TableSchema.of(TableId.of("bench", "t"), names, List.of("id"));
        keys = new long[EVENTS];
        values = new Object[EVENTS][];
        positions = new SourcePosition[EVENTS];
        long nextKey = 0;
        for (int event = 0; event < EVENTS; event++) {
            keys[event] = event > 0 && random.nextDouble() < keyCollisionRate ? keys[random.nextInt(event)] : nextKey++;
            Object[] row = new Object[columns];
            row[0] = keys[event];
            for (int column = 1; column < columns; column++) {
                row[column] = column % 3 == 0 ? (Object) random.nextLong() : "value " + random.nextInt();
            }
            values[event] = row;
            positions[event] = new SourcePosition("bench", Integer.toString(event));
        }
    }

    /** Keys among the events: the rows a merged batch of them holds. */
    long distinctKeys()
    {
        return Arrays.stream(keys).distinct().count();
    }

    /**
     * Returns the rows of the merged batches (returned, so JMH consumes them), which must be {@link #distinctKeys()}.
     */
    @Benchmark
    @OperationsPerInvocation(EVENTS)
    public long mergeAndBatch(Blackhole blackhole)
    {
        long[] rows = new long[1];
        BatchApplier applier = new BatchApplier()
        {
            @Override
            public void apply(Batch batch)
            {
                for (TableBatch table : batch.tables()) {
                    rows[0] += table.changes().size();
                }
                blackhole.consume(batch);
            }

            @Override
            public Map<String, SourcePosition> committedPositions()
            {
                return Map.of();
            }

            @Override
            public void close() {}
        };
        try (BufferedSink sink = new BufferedSink("bench", new FlushPolicy(Long.MAX_VALUE, Long.MAX_VALUE,
                Long.MAX_VALUE), applier)) {
            for (int event = 0; event < EVENTS; event++) {
                // the sink owns the arrays it is given, so each event gets a fresh copy, as from an adapter
                sink.accept(ChangeEvent.update(schema, null, values[event].clone(), positions[event], 0));
            }
            sink.flush();
        }
        return rows[0];
    }
}
