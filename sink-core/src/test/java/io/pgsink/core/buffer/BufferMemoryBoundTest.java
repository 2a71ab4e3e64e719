package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code buffer.max.bytes} bounds the heap the buffer really holds: the size estimates of
 * {@link ValueSizes} must not undercount, or a burst could exhaust the heap before a flush.
 * Measured with full GCs around the moment the buffer is fullest (inside the flush).
 */
class BufferMemoryBoundTest
{
    private static final long MAX_BYTES = 48L * 1024 * 1024;
    /** What the buffer may hold beyond the bound: the last event before the flush, maps' slack. */
    private static final double ALLOWED_RATIO = 1.25;

    private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

    @Test
    void heapHeldByBufferStaysWithinBound()
    {
        TableSchema schema = TableSchema.of(TableId.of("s", "wide"), List.of("id", "a", "b", "c", "d", "e", "f"), List.of("id"));
        List<Long> heldAtFlush = new ArrayList<>();
        long baseline = usedAfterGc();
        BatchApplier measuring = new BatchApplier()
        {
            @Override
            public void apply(Batch batch)
            {
                // the batch references every buffered row: this is the buffer at its fullest
                heldAtFlush.add(usedAfterGc() - baseline);
            }

            @Override
            public Map<String, SourcePosition> committedPositions()
            {
                return Map.of();
            }

            @Override
            public void close() {}
        };
        Random random = new Random(7);
        try (BufferedSink sink = new BufferedSink("memory", new FlushPolicy(Long.MAX_VALUE, MAX_BYTES, Long.MAX_VALUE), measuring)) {
            long key = 0;
            while (heldAtFlush.size() < 3) {
                // half of the events update a recent key, so merged rows replace earlier ones
                long id = random.nextBoolean() && key > 100 ? key - random.nextInt(100) : key++;
                Object[] row = {id, "text " + random.nextInt(), random.nextLong(), new java.math.BigDecimal(random.nextInt()).movePointLeft(2),
                        "x".repeat(random.nextInt(400)), random.nextBoolean(), java.time.LocalDateTime.of(2026, 1, 1, 0, 0).plusSeconds(random.nextInt())};
                sink.accept(ChangeEvent.update(schema, null, row, new SourcePosition("p", Long.toString(id)), 0));
            }
        }
        assertThat(heldAtFlush).allSatisfy(held -> assertThat(held)
                .as("heap held by a full buffer, bound %s bytes", MAX_BYTES)
                .isLessThan((long) (MAX_BYTES * ALLOWED_RATIO))
                // and the estimate is not so generous that the buffer holds far less than allowed
                .isGreaterThan(MAX_BYTES / 3));
    }

    private static long usedAfterGc()
    {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return MEMORY.getHeapMemoryUsage().getUsed();
    }
}
