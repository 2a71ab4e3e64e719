package io.pgsink.core.buffer;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.UnavailableValue;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Cheap estimates of the heap a buffered row takes, for the {@code buffer.max.bytes} limit. They
 * follow the 64-bit JVM layout with compressed references closely enough to bound memory; they are
 * not exact and need not be.
 */
public final class ValueSizes
{
    private static final long ARRAY_HEADER = 16;
    private static final long REFERENCE = 4;
    /** String object plus its byte array's header and alignment slack. */
    private static final long STRING = 24 + ARRAY_HEADER + 8;
    private static final long BOXED = 16;
    /**
     * A buffer entry: the linked map node (40), the key object (24) and its array (24), the entry
     * object (32) and its share of the map's table (8).
     */
    static final long ENTRY_OVERHEAD = 40 + 24 + 24 + 32 + 8;

    private ValueSizes() {}

    /** A position held per buffered key: the record and its offset string (the partition string is shared). */
    public static long position(SourcePosition position)
    {
        // a deferred offset (SourcePosition.deferred) is estimated, not written: most are never written
        return 24 + STRING + position.offsetLengthEstimate();
    }

    public static long row(Object[] values)
    {
        long size = ARRAY_HEADER + REFERENCE * values.length;
        for (Object value : values) {
            size += value(value);
        }
        return size;
    }

    public static long value(Object value)
    {
        if (value == null || value instanceof Boolean || value instanceof UnavailableValue) {
            return 0;
        }
        if (value instanceof String string) {
            // Latin-1 strings take a byte per char, others two; assume the worst only when it is cheap to know
            return STRING + string.length();
        }
        if (value instanceof byte[] bytes) {
            return ARRAY_HEADER + bytes.length;
        }
        if (value instanceof ByteBuffer buffer) {
            return 48 + buffer.capacity();
        }
        if (value instanceof List<?> list) {
            long size = 40 + ARRAY_HEADER + REFERENCE * list.size();
            for (Object element : list) {
                size += value(element);
            }
            return size;
        }
        if (value instanceof java.math.BigDecimal decimal) {
            // small values keep a compact long; large ones a BigInteger with an int array
            return 40 + (decimal.precision() > 18 ? 40 + ARRAY_HEADER + decimal.unscaledValue().bitLength() / 8 : 0);
        }
        if (value instanceof java.math.BigInteger integer) {
            return 40 + ARRAY_HEADER + integer.bitLength() / 8;
        }
        if (value instanceof Number) {
            return BOXED + 8;
        }
        if (value instanceof java.time.LocalDateTime) {
            // the date-time and its LocalDate and LocalTime
            return 72;
        }
        if (value instanceof java.time.OffsetDateTime || value instanceof java.time.ZonedDateTime) {
            return 72 + 24;
        }
        // LocalDate, LocalTime, Instant, UUID, OffsetTime and the like
        return 40;
    }
}
