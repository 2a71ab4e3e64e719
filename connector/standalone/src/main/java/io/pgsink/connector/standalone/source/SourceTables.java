package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import org.intellij.lang.annotations.Language;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The source's tables as {@code pg_class} shows them at one moment: each by its oid, which a rename
 * keeps and a drop and create again changes, with its name, whether it is partitioned, and the
 * partitioned table it is a partition of (with its bound). What {@link TableChanges} compares.
 *
 * <p>Immutable.
 */
public record SourceTables(Map<Long, Table> byOid)
{
    /**
     * Whether table {@code c}'s REPLICA IDENTITY is an index that lacks primary key columns: the old
     * rows of its deletes and key changes do not carry its key.
     */
    @Language(value = "SQL", prefix = "SELECT ", suffix = " FROM pg_catalog.pg_class c")
    public static final String IDENTITY_WITHOUT_KEY = """
            c.relreplident = 'i' AND EXISTS (SELECT 1 FROM pg_catalog.pg_index pk WHERE pk.indrelid = c.oid
                AND pk.indisprimary
                AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index ri WHERE ri.indrelid = c.oid AND ri.indisreplident
                    AND pk.indkey::int2[] <@ ri.indkey::int2[]))""";

    @Language("SQL")
    private static final String QUERY = """
            SELECT c.oid, n.nspname, c.relname, c.relkind = 'p', i.inhparent, pg_catalog.pg_get_expr(c.relpartbound,
                c.oid), %s
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_catalog.pg_inherits i ON i.inhrelid = c.oid AND c.relispartition
            WHERE c.relkind IN ('r', 'p') AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog',
                'information_schema', 'pg_toast')""";

    /**
     * One table; {@code parent} is 0 and {@code bound} null for a table that is not a partition.
     * {@code identityWithoutKey}: its REPLICA IDENTITY is an index that lacks primary key columns,
     * so its deletes and key changes are streamed without the old key.
     */
    record Table(long oid, TableId name, boolean partitioned, long parent, @Nullable String bound,
            boolean identityWithoutKey)
    {
        Table
        {
            requireNonNull(name, "name is null");
        }

        boolean isPartition()
        {
            return parent != 0;
        }
    }

    public SourceTables
    {
        byOid = Map.copyOf(byOid);
    }

    static SourceTables read(Connection connection)
            throws SQLException
    {
        Map<Long, Table> tables = new HashMap<>();
        try (Statement statement = connection.createStatement(); ResultSet rows =
                statement.executeQuery(QUERY.formatted(IDENTITY_WITHOUT_KEY))) {
            while (rows.next()) {
                long oid = rows.getLong(1);
                tables.put(oid, new Table(oid, TableId.of(rows.getString(2), rows.getString(3)), rows.getBoolean(4),
                        rows.getLong(5), rows.getString(6), rows.getBoolean(7)));
            }
        }
        return new SourceTables(tables);
    }

    Optional<Table> byName(TableId name)
    {
        return byOid.values().stream().filter(table -> table.name().equals(name)).findFirst();
    }

    /** The partitions of {@code parent}, by oid. */
    List<Table> partitionsOf(long parent)
    {
        List<Table> partitions = new ArrayList<>();
        for (Table table : byOid.values()) {
            if (table.parent() == parent) {
                partitions.add(table);
            }
        }
        return partitions;
    }
}
