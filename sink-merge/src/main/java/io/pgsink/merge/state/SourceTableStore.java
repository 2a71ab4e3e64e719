package io.pgsink.merge.state;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.TargetCatalog;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * The standalone service's last accepted reading of the captured source tables, kept in the target
 * ({@code offsets.schema}.{@code pgsink_source_tables}, DDL in {@link SinkTables}) so that a start
 * compares the source catalog with it rather than with nothing: a table renamed, dropped and
 * created again, or a partition attached or detached while pgsink was stopped is seen as if it
 * happened while it ran. One row per sink and source table oid. The reading is replaced as a whole
 * ({@code DELETE}, then {@code INSERT}: plain statements, the same on PostgreSQL and Greenplum 6/7).
 *
 * <p>Stateless apart from its configuration; every method works on the connection it is given and
 * leaves committing to the caller unless it says otherwise.
 */
public final class SourceTableStore
{
    public static final String TABLE = "pgsink_source_tables";

    /**
     * One source table as read from {@code pg_class}: its oid (kept by a rename, new after a drop
     * and create), name, whether it is partitioned, the partitioned table it is a partition of
     * (0 for none) with its bound, and whether its replica identity leaves key columns out.
     */
    public record StoredTable(long oid, TableId name, boolean partitioned, long parentOid, Optional<String> bound,
            boolean identityWithoutKey)
    {
        public StoredTable
        {
            requireNonNull(name, "name is null");
            requireNonNull(bound, "bound is null");
        }
    }

    private final String sinkName;
    private final String qualifiedTable;

    public SourceTableStore(SinkConfig config)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.qualifiedTable = quote(config.offsetsSchema()) + "." + quote(TABLE);
    }

    /** The table, quoted, for messages. */
    public String qualifiedTable()
    {
        return qualifiedTable;
    }

    /** Creates the table unless it exists, and commits. */
    public void createTable(Connection connection, Dialect dialect)
            throws SQLException
    {
        SinkTables.create(connection, SinkTables.sourceTablesTable(qualifiedTable, dialect));
    }

    /** The reading stored for this sink, by oid; empty when none was. */
    public List<StoredTable> read(Connection connection)
            throws SQLException
    {
        List<StoredTable> tables = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT table_oid, source_schema, source_table, "
                + "partitioned, parent_oid, partition_bound, identity_without_key FROM "
                + qualifiedTable + " WHERE sink_name = ? ORDER BY table_oid")) {
            statement.setString(1, sinkName);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    tables.add(new StoredTable(rows.getLong(1), TableId.of(rows.getString(2), rows.getString(3)),
                            rows.getBoolean(4), rows.getLong(5),
                            Optional.ofNullable(rows.getString(6)), rows.getBoolean(7)));
                }
            }
        }
        return tables;
    }

    /** Replaces this sink's reading with {@code tables}. */
    public void replace(Connection connection, Collection<StoredTable> tables)
            throws SQLException
    {
        clear(connection);
        try (PreparedStatement statement = connection.prepareStatement(insert(qualifiedTable))) {
            for (StoredTable table : tables) {
                statement.setString(1, sinkName);
                statement.setLong(2, table.oid());
                statement.setString(3, table.name().schema());
                statement.setString(4, table.name().table());
                statement.setBoolean(5, table.partitioned());
                statement.setLong(6, table.parentOid());
                if (table.bound().isPresent()) {
                    statement.setString(7, table.bound().get());
                }
                else {
                    statement.setNull(7, Types.VARCHAR);
                }
                statement.setBoolean(8, table.identityWithoutKey());
                statement.addBatch();
            }
            if (!tables.isEmpty()) {
                statement.executeBatch();
            }
        }
    }

    /** Forgets this sink's reading: the next start takes the catalog as it finds it. */
    public int clear(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(delete(qualifiedTable))) {
            statement.setString(1, sinkName);
            return statement.executeUpdate();
        }
    }

    /**
     * Stores one table of a reading: a plain INSERT (the sink's rows were deleted first), as Greenplum 6 has no
     * {@code ON CONFLICT}.
     */
    @Language("SQL")
    static String insert(String qualifiedTable)
    {
        return "INSERT INTO " + qualifiedTable
                + " (sink_name, table_oid, source_schema, source_table, partitioned, parent_oid, partition_bound, "
                + "identity_without_key, read_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, now())";
    }

    @Language("SQL")
    static String delete(String qualifiedTable)
    {
        return "DELETE FROM " + qualifiedTable + " WHERE sink_name = ?";
    }

    /**
     * The statement a user runs to have pgsink forget what it stored of source table {@code table}
     * (for messages): the next start takes that table as it finds it.
     */
    public String forgetStatement(TableId table)
    {
        return "DELETE FROM " + qualifiedTable + " WHERE sink_name = " + literal(sinkName) + " AND source_schema = "
                + literal(table.schema())
                + " AND source_table = " + literal(table.table());
    }

    /**
     * Whether target table {@code table} exists (visible to the target user): a rename of its source table was followed
     * in the target.
     */
    public static boolean targetTableExists(Connection connection, TableId table)
            throws SQLException
    {
        return TargetCatalog.exists(connection, table);
    }

    private static String literal(String value)
    {
        return "'" + value.replace("'", "''") + "'";
    }
}
