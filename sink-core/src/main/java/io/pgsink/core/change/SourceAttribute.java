package io.pgsink.core.change;

import org.jetbrains.annotations.Nullable;

import static java.util.Objects.requireNonNull;

/**
 * A column of a source table as the source database's catalog shows it now (PostgreSQL's
 * {@code pg_attribute}), which says more than change events do: the attribute number a column keeps
 * when it is renamed, and its default expression when the adapter sent none (a function such as
 * {@code now()} or {@code random()}).
 *
 * @param number the attribute number ({@code attnum}); a dropped column keeps its number
 * @param name the column name; meaningless for a dropped column
 * @param dropped whether the column was dropped
 * @param defaultExpression the default as the source prints it ({@code pg_get_expr}), or null
 * @param missingValue when the column was added with a default evaluated once (a constant or a
 *         stable function such as {@code now()}, PostgreSQL 11+), the value every row that existed
 *         before holds, in the type's text form; null otherwise (no default, or a volatile one,
 *         which PostgreSQL computed row by row when it rewrote the table)
 */
public record SourceAttribute(int number, String name, boolean dropped, @Nullable String defaultExpression,
        @Nullable String missingValue)
{
    public SourceAttribute
    {
        requireNonNull(name, "name is null");
    }
}
