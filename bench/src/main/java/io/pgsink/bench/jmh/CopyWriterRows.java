package io.pgsink.bench.jmh;

import io.pgsink.copy.write.ChunkConsumer;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Random;
import java.util.UUID;

/**
 * The rows {@link BenchmarkCsvWriter} and {@link BenchmarkBinaryCopyWriter} encode, so that their
 * scores compare: {@value #ROWS} rows of {@code columns} values of {@link #TYPES}, from a fixed seed,
 * and a consumer that discards the encoded bytes (so only encoding is measured).
 */
@State(Scope.Thread)
public class CopyWriterRows
{
    static final int ROWS = 1000;
    /** The column types of a row, repeated to reach the row width. */
    static final String[] TYPES = {"int8", "int4", "text", "numeric", "timestamptz", "bool", "uuid", "text"};

    @Param({"8", "32"})
    public int columns;

    /**
     * Share of text values that contain a delimiter, quote or newline and so need quoting in CSV (binary does not
     * care).
     */
    @Param({"0.0", "0.2"})
    public double quotedShare;

    Object[][] rows;
    /** Bytes the writer handed over; consumed by a {@code Blackhole} so that the hand-over is not optimized away. */
    long discarded;

    @Setup(Level.Trial)
    public void setUp()
    {
        Random random = new Random(42);
        rows = new Object[ROWS][columns];
        for (int row = 0; row < ROWS; row++) {
            for (int column = 0; column < columns; column++) {
                rows[row][column] = value(type(column), random, quotedShare);
            }
        }
    }

    static String type(int column)
    {
        return TYPES[column % TYPES.length];
    }

    /** A writer's output that only counts the bytes. */
    ChunkConsumer discard()
    {
        return (buffer, offset, length) -> discarded += length;
    }

    private static Object value(String type, Random random, double quotedShare)
    {
        return switch (type) {
            case "int8" -> random.nextLong();
            case "int4" -> random.nextInt();
            case "numeric" -> BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2);
            case "timestamptz" -> OffsetDateTime.ofInstant(
                    Instant.ofEpochSecond(1_700_000_000L + random.nextInt(100_000_000),
                            random.nextInt(1_000_000) * 1000L),
                    ZoneOffset.UTC);
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
}
