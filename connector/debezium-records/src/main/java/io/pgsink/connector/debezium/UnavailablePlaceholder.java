package io.pgsink.connector.debezium;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static java.util.Objects.requireNonNull;

/**
 * Recognizes Debezium's placeholder for an unchanged TOASTed value ({@code unavailable.value.placeholder},
 * default {@value #DEFAULT}) in every shape the PostgreSQL connector sends it: the text (text, json,
 * numeric as text...), its bytes (bytea), a one-element list of either (text and bytea arrays), the
 * bytes as a list of integers or longs (int4 and int8 arrays), a one-element list of the name-based
 * UUID of the bytes (uuid arrays) and a one-entry map of the text to itself (hstore as a map).
 */
public final class UnavailablePlaceholder
{
    public static final String DEFAULT = "__debezium_unavailable_value";

    private final String text;
    private final byte[] bytes;
    private final List<Integer> integers;
    private final List<Long> longs;
    private final String uuid;

    public UnavailablePlaceholder(String text)
    {
        this.text = requireNonNull(text, "text is null");
        if (text.isEmpty()) {
            throw new IllegalArgumentException("the placeholder is empty");
        }
        this.bytes = text.getBytes(StandardCharsets.UTF_8);
        List<Integer> integers = new ArrayList<>(bytes.length);
        List<Long> longs = new ArrayList<>(bytes.length);
        for (byte b : bytes) {
            integers.add((int) b);
            longs.add((long) b);
        }
        this.integers = List.copyOf(integers);
        this.longs = List.copyOf(longs);
        this.uuid = UUID.nameUUIDFromBytes(bytes).toString();
    }

    public String text()
    {
        return text;
    }

    boolean matches(Object value)
    {
        if (value instanceof String string) {
            return string.length() == text.length() && string.equals(text);
        }
        if (value instanceof byte[] array) {
            return Arrays.equals(array, bytes);
        }
        if (value instanceof ByteBuffer buffer) {
            return buffer.remaining() == bytes.length && buffer.equals(ByteBuffer.wrap(bytes));
        }
        if (value instanceof List<?> list) {
            if (list.size() == 1) {
                Object element = list.get(0);
                return element != null
                        && (element.equals(text) || element.equals(uuid)
                                || (element instanceof byte[] || element instanceof ByteBuffer) && matches(element));
            }
            return list.size() == bytes.length && (list.equals(integers) || list.equals(longs));
        }
        if (value instanceof Map<?, ?> map) {
            return map.size() == 1 && text.equals(map.get(text));
        }
        return false;
    }
}
