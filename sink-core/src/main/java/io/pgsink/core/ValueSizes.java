package io.pgsink.core;

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
    private static final long STRING = 24 + ARRAY_HEADER;
    private static final long BOXED = 16;
    /** A buffer entry: the map node, the key object and its array, the entry object. */
    static final long ENTRY_OVERHEAD = 32 + 24 + ARRAY_HEADER + 32;

    private ValueSizes() {}

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
        if (value instanceof Number && !(value instanceof java.math.BigDecimal) && !(value instanceof java.math.BigInteger)) {
            return BOXED;
        }
        // BigDecimal, java.time values, UUID and the like
        return 48;
    }
}
