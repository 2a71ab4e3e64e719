package io.pgsink.bench.jmh;

import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.config.CopyFormat;
import org.openjdk.jmh.annotations.AuxCounters;
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

import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Random;
import java.util.UUID;

import java.util.concurrent.TimeUnit;

/**
 * CSV encoding throughput of {@link CsvWriter} with the per-type encoders, into a consumer that
 * discards the bytes (so only encoding is measured). Score is rows per second; the
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
    static final int ROWS = 1000;
    /** The column types of a row, repeated to reach the row width. */
    static final String[] TYPES = {"int8", "int4", "text", "numeric", "timestamptz", "bool", "uuid", "text"};

    @Param({"8", "32"})
    public int columns;

    /** Share of text values that contain a delimiter, quote or newline and so need quoting. */
    @Param({"0.0", "0.2"})
    public double quotedShare;

    private Object[][] rows;
    private ValueEncoder[] encoders;
    private CsvWriter writer;
    private long discarded;

    @Setup(Level.Trial)
    public void setUp()
    {
        encoders = new ValueEncoder[columns];
        for (int column = 0; column < columns; column++) {
            encoders[column] = ValueEncoders.forType(TYPES[column % TYPES.length]);
        }
        rows = rows(columns, quotedShare);
        writer = new CsvWriter(CopyFormat.DEFAULT, (buffer, offset, length) -> discarded += length);
    }

    /** {@value #ROWS} rows of {@code columns} values of {@link #TYPES}, from a fixed seed. */
    static Object[][] rows(int columns, double quotedShare)
    {
        Random random = new Random(42);
        Object[][] rows = new Object[ROWS][columns];
        for (int row = 0; row < ROWS; row++) {
            for (int column = 0; column < columns; column++) {
                rows[row][column] = value(TYPES[column % TYPES.length], random, quotedShare);
            }
        }
        return rows;
    }

    private static Object value(String type, Random random, double quotedShare)
    {
        return switch (type) {
            case "int8" -> random.nextLong();
            case "int4" -> random.nextInt();
            case "numeric" -> BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2);
            case "timestamptz" -> OffsetDateTime.ofInstant(Instant.ofEpochSecond(1_700_000_000L + random.nextInt(100_000_000), random.nextInt(1_000_000) * 1000L), ZoneOffset.UTC);
            case "bool" -> random.nextBoolean();
            case "uuid" -> new UUID(random.nextLong(), random.nextLong());
            default -> random.nextDouble() < quotedShare
                    ? "text with, a delimiter and \"quotes\"\nand a newline " + random.nextInt()
                    : "plain text value number " + random.nextInt();
        };
    }

    /** Bytes produced, reported per second next to the rows/s score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes
    {
        public long bytes;
    }

    @Benchmark
    @OperationsPerInvocation(ROWS)
    public void encodeRows(Bytes bytes, Blackhole blackhole)
            throws Exception
    {
        long before = writer.bytesWritten();
        for (Object[] row : rows) {
            for (int column = 0; column < row.length; column++) {
                encoders[column].encode(row[column], writer);
            }
            writer.endRow();
        }
        writer.finish();
        bytes.bytes += writer.bytesWritten() - before;
        blackhole.consume(discarded);
    }
}
