package io.pgsink.core.change;

import java.util.Arrays;

import static java.util.Objects.requireNonNull;

/**
 * The primary-key values of a row, in key-column order. Equality is by value, element by element
 * ({@code byte[]} keys compare by content). Adapters must produce the same Java type for a column
 * in every event (e.g. always {@code Long} for an {@code int8}), or equal keys would not meet.
 */
public final class RowKey
{
    /** The key of rows of a table without a primary key, which are appended and never merged. */
    public static final RowKey NONE = new RowKey(new Object[0]);

    private final Object[] values;
    private final int hash;

    public RowKey(Object[] values)
    {
        this.values = requireNonNull(values, "values is null");
        this.hash = Arrays.deepHashCode(values);
    }

    public int size()
    {
        return values.length;
    }

    public Object value(int position)
    {
        return values[position];
    }

    @Override
    public boolean equals(Object o)
    {
        return this == o || (o instanceof RowKey that && hash == that.hash && Arrays.deepEquals(values, that.values));
    }

    @Override
    public int hashCode()
    {
        return hash;
    }

    /**
     * For error messages: {@code (42)} or {@code (7, "abc")}. Keys are what users need to find a row, so they are
     * shown.
     */
    @Override
    public String toString()
    {
        StringBuilder builder = new StringBuilder("(");
        for (int i = 0; i < values.length; i++) {
            if (i > 0) {
                builder.append(", ");
            }
            Object value = values[i];
            if (value instanceof byte[] bytes) {
                builder.append("bytea[").append(bytes.length).append(']');
            }
            else if (value instanceof CharSequence) {
                builder.append('"').append(value).append('"');
            }
            else {
                builder.append(value);
            }
        }
        return builder.append(')').toString();
    }
}
