package io.pgsink.core;

import org.jetbrains.annotations.Nullable;

import static java.util.Objects.requireNonNull;

/**
 * A column of a source table as the change events describe it.
 *
 * @param name the column name, exactly as the source spells it
 * @param typeName the source type when the adapter knows it (e.g. {@code int8}, {@code varchar(20)}),
 *         otherwise the empty string; used for auto-creating target tables, never for encoding
 *         (encoding follows the target column's type)
 * @param optional whether the source allows NULL
 * @param defaultValue the column's constant default on the source, as the adapter converts values
 *         of this column, when the adapter knows one (Debezium reads constant defaults, not
 *         volatile ones such as {@code now()}); null otherwise. Used for creating target columns:
 *         a column added with a default holds it in every existing row.
 */
public record ColumnSchema(String name, String typeName, boolean optional, @Nullable Object defaultValue)
{
    public ColumnSchema
    {
        requireNonNull(name, "name is null");
        requireNonNull(typeName, "typeName is null");
    }

    public ColumnSchema(String name, String typeName, boolean optional)
    {
        this(name, typeName, optional, null);
    }

    public static ColumnSchema of(String name)
    {
        return new ColumnSchema(name, "", true);
    }
}
