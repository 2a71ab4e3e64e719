package io.pgsink.bench.jmh;

import io.pgsink.copy.encode.binary.BinaryValueEncoder;
import io.pgsink.copy.encode.binary.BinaryValueEncoders;
import io.pgsink.copy.write.BinaryCopyWriter;
import io.pgsink.core.config.NulCharacterHandling;
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
 * Binary COPY encoding throughput of {@link BinaryCopyWriter} with the binary encoders, on the same
 * rows as {@link BenchmarkCsvWriter} ({@link CopyWriterRows}: same seed, types and parameters), into
 * a consumer that discards the bytes. Score is rows per second; the {@code bytes} counter gives
 * bytes per second; {@code -prof gc} the allocation per row, to compare with CSV's.
 *
 * <pre>java -jar bench/target/benchmarks.jar 'Benchmark(Csv|BinaryCopy)Writer' -prof gc</pre>
 */
@State(Scope.Thread)
@Fork(2)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class BenchmarkBinaryCopyWriter
{
    private BinaryValueEncoder[] encoders;
    private BinaryCopyWriter writer;

    @Setup(Level.Trial)
    public void setUp(CopyWriterRows rows)
    {
        encoders = new BinaryValueEncoder[rows.columns];
        for (int column = 0; column < rows.columns; column++) {
            encoders[column] = BinaryValueEncoders.forType(CopyWriterRows.type(column)).orElseThrow();
        }
        writer = new BinaryCopyWriter(NulCharacterHandling.FAIL, rows.discard());
    }

    /** Each row as the sink writes it: the class check that chooses binary, then the encoding. */
    @Benchmark
    @OperationsPerInvocation(CopyWriterRows.ROWS)
    public void encodeRows(CopyWriterRows rows, CopyWriterRows.Bytes bytes, Blackhole blackhole)
            throws Exception
    {
        long before = writer.bytesWritten();
        for (Object[] row : rows.rows) {
            for (int column = 0; column < row.length; column++) {
                if (!encoders[column].accepts(row[column])) {
                    throw new IllegalStateException("no binary form for column " + column);
                }
            }
            for (int column = 0; column < row.length; column++) {
                encoders[column].encode(row[column], writer);
            }
            writer.endRow();
        }
        // the stream goes on: a binary COPY has one header and one trailer, so finish() is not per batch of rows here
        bytes.bytes += writer.bytesWritten() - before;
        blackhole.consume(rows.discarded);
    }
}
