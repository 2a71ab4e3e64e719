package io.pgsink.core.change;

import static java.util.Objects.requireNonNull;

/**
 * A table's identity: schema and name, exactly as PostgreSQL spells them (case and all). Ordered by
 * schema, then name, which is the fixed order in which a flush applies tables.
 */
public record TableId(String schema, String table)
        implements Comparable<TableId>
{
    public TableId
    {
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
        if (schema.isEmpty()) {
            throw new IllegalArgumentException("schema is empty");
        }
        if (table.isEmpty()) {
            throw new IllegalArgumentException("table is empty");
        }
    }

    public static TableId of(String schema, String table)
    {
        return new TableId(schema, table);
    }

    @Override
    public int compareTo(TableId other)
    {
        int result = schema.compareTo(other.schema);
        return result != 0 ? result : table.compareTo(other.table);
    }

    /** {@code "schema"."table"} as it would be written in SQL, so that unusual names read unambiguously in messages. */
    @Override
    public String toString()
    {
        return quote(schema) + "." + quote(table);
    }

    private static String quote(String name)
    {
        return '"' + name.replace("\"", "\"\"") + '"';
    }
}
