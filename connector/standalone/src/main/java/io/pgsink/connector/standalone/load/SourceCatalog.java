package io.pgsink.connector.standalone.load;

import io.pgsink.copy.sql.PrimaryKeys;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the captured source tables, their columns, keys and sizes, inside the load's snapshot
 * transaction, so that what is planned is what the snapshot holds. Only ordinary, permanent tables:
 * logical decoding streams neither unlogged nor temporary tables, and partitions are read (and
 * streamed by pgoutput) as themselves.
 */
public final class SourceCatalog
{
    /**
     * Types below this OID are defined by the server's own catalog files ({@code FirstGenbkiObjectId}),
     * with the same OID in every database of a major version; enums, domains, composites and extension
     * types get theirs when created.
     */
    private static final int FIRST_GENBKI_OBJECT_ID = 10_000;

    @Language("SQL")
    private static final String TABLES = """
            SELECT c.oid, n.nspname, c.relname, pg_catalog.pg_relation_size(c.oid), c.reltuples::bigint
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind = 'r' AND c.relpersistence = 'p'
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
                  AND n.nspname NOT LIKE 'pg\\_temp%'
            ORDER BY n.nspname, c.relname""";

    /**
     * With {@code publish_via_partition_root} (PostgreSQL 13+): partitioned roots instead of their partitions, sized by
     * their leaves.
     */
    @Language("SQL")
    private static final String TABLES_VIA_PARTITION_ROOT = """
            SELECT c.oid, n.nspname, c.relname,
                   CASE WHEN c.relkind = 'p'
                        THEN (SELECT coalesce(sum(pg_catalog.pg_relation_size(t.relid)), 0)
                            FROM pg_catalog.pg_partition_tree(c.oid) t WHERE t.isleaf)::bigint
                        ELSE pg_catalog.pg_relation_size(c.oid) END,
                   CASE WHEN c.relkind = 'p'
                        THEN (SELECT coalesce(sum(greatest(l.reltuples, 0)), 0)
                            FROM pg_catalog.pg_partition_tree(c.oid) t JOIN pg_catalog.pg_class l ON l.oid = t.relid
                            WHERE t.isleaf)::bigint
                        ELSE c.reltuples::bigint END,
                   c.relkind = 'p'
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relpersistence = 'p'
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'
                  AND n.nspname NOT LIKE 'pg\\_temp%'
            ORDER BY n.nspname, c.relname""";

    private SourceCatalog() {}

    /** The row schemas of the tables {@code filter} captures, in name order: what Debezium's events will carry. */
    public static List<TableSchema> schemas(Connection connection, LoadSettings.CaptureFilter filter)
            throws SQLException
    {
        return read(connection, filter).stream().map(SourceTable::schema).toList();
    }

    /** The tables {@code filter} captures, in name order. */
    static List<SourceTable> read(Connection connection, LoadSettings.CaptureFilter filter)
            throws SQLException
    {
        boolean viaRoot = filter.viaPartitionRoot();
        boolean generatedColumns = connection.getMetaData().getDatabaseMajorVersion() >= 12;
        @Language("SQL")
        String columns = "SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), NOT a.attnotnull, "
                + "a.atttypid < " + FIRST_GENBKI_OBJECT_ID + " FROM pg_catalog.pg_attribute a"
                + " WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped" + (generatedColumns
                        ? " AND a.attgenerated = ''" : "") + " ORDER BY a.attnum";
        List<SourceTable> tables = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(filter.viaPartitionRoot()
                ? TABLES_VIA_PARTITION_ROOT : TABLES); ResultSet rows = statement.executeQuery()) {
            while (rows.next()) {
                TableId id = TableId.of(rows.getString(2), rows.getString(3));
                if (!filter.capturesTable(id.schema(), id.table())) {
                    continue;
                }
                long oid = rows.getLong(1);
                List<ColumnSchema> tableColumns = new ArrayList<>();
                boolean builtInTypes = true;
                try (PreparedStatement columnStatement = connection.prepareStatement(columns)) {
                    columnStatement.setLong(1, oid);
                    try (ResultSet columnRows = columnStatement.executeQuery()) {
                        while (columnRows.next()) {
                            String name = columnRows.getString(1);
                            if (filter.capturesColumn(id.schema(), id.table(), name)) {
                                tableColumns.add(new ColumnSchema(name, columnRows.getString(2),
                                        columnRows.getBoolean(3)));
                                builtInTypes &= columnRows.getBoolean(4);
                            }
                        }
                    }
                }
                List<String> key = new ArrayList<>();
                key.addAll(PrimaryKeys.of(connection, oid));
                if (tableColumns.isEmpty()) {
                    continue;
                }
                tables.add(new SourceTable(new TableSchema(id, tableColumns, key), rows.getLong(4), rows.getLong(5),
                        viaRoot && rows.getBoolean(6), builtInTypes));
            }
        }
        return tables;
    }

    /** The snapshot of the connection's transaction as {@code xmin:xmax:xip,...} (64-bit transaction ids). */
    static String snapshot(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT pg_catalog.txid_current_snapshot()::text"); ResultSet rows =
                statement.executeQuery()) {
            rows.next();
            return rows.getString(1);
        }
    }

    /** Whether the server scans {@code ctid} ranges without reading the whole table (PostgreSQL 14+). */
    static boolean scansTidRanges(Connection connection)
            throws SQLException
    {
        return connection.getMetaData().getDatabaseMajorVersion() >= 14;
    }
}
