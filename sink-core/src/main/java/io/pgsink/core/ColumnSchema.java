package io.pgsink.core;

import static java.util.Objects.requireNonNull;

/**
 * A column of a source table as the change events describe it.
 *
 * @param name the column name, exactly as the source spells it
 * @param typeName the source type when the adapter knows it (e.g. {@code int8}, {@code varchar(20)}),
 *         otherwise the empty string; used for auto-creating target tables, never for encoding
 *         (encoding follows the target column's type)
 * @param optional whether the source allows NULL
 */
public record ColumnSchema(String name, String typeName, boolean optional)
{
    public ColumnSchema
    {
        requireNonNull(name, "name is null");
        requireNonNull(typeName, "typeName is null");
    }

    public static ColumnSchema of(String name)
    {
        return new ColumnSchema(name, "", true);
    }
}
