package io.pgsink.core.change;

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
 *         a column added with a default holds it in every existing row. {@link UnknownDefault#INSTANCE}
 *         when the column has a default the adapter cannot tell from a stand-in it made up.
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

    /**
     * The default of a column that has one the adapter cannot know: Debezium turns a default it
     * cannot evaluate ({@code now()}, {@code current_user}) into a stand-in (the epoch, the
     * expression's text), which records cannot tell from the same constant. No target default is
     * written for it; rows that existed before such a column was added hold values the sink must
     * learn elsewhere (the source catalog) or be told.
     */
    public enum UnknownDefault
    {
        INSTANCE
    }

    /** Whether the column has a default on the source whose value the adapter cannot know. */
    public boolean hasUnknownDefault()
    {
        return defaultValue == UnknownDefault.INSTANCE;
    }

    public static ColumnSchema of(String name)
    {
        return new ColumnSchema(name, "", true);
    }
}
