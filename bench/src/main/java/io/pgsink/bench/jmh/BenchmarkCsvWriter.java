package io.pgsink.bench.jmh;

import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.config.CopyFormat;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.util.concurrent.TimeUnit;

/**
 * CSV encoding throughput of {@link CsvWriter} with the per-type encoders, on the rows of
 * {@link CopyWriterRows}, into a consumer that discards the bytes. Score is rows per second; the
 * {@code bytes} counter gives bytes per second.
 *
 * <pre>java -jar bench/target/benchmarks.jar BenchmarkCsvWriter -prof gc</pre>
 */
@State(Scope.Thread)
@Fork(2)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BenchmarkCsvWriter
{
    private ValueEncoder[] encoders;
    private CsvWriter writer;

    @Setup(Level.Trial)
    public void setUp(CopyWriterRows rows)
    {
        encoders = new ValueEncoder[rows.columns];
        for (int column = 0; column < rows.columns; column++) {
            encoders[column] = ValueEncoders.forType(CopyWriterRows.type(column));
        }
        writer = new CsvWriter(CopyFormat.DEFAULT, rows.discard());
    }

    @Benchmark
    @OperationsPerInvocation(CopyWriterRows.ROWS)
    public void encodeRows(CopyWriterRows rows, CopyWriterRows.Bytes bytes, Blackhole blackhole)
            throws Exception
    {
        long before = writer.bytesWritten();
        for (Object[] row : rows.rows) {
            for (int column = 0; column < row.length; column++) {
                encoders[column].encode(row[column], writer);
            }
            writer.endRow();
        }
        writer.finish();
        bytes.bytes += writer.bytesWritten() - before;
        blackhole.consume(rows.discarded);
    }
}
