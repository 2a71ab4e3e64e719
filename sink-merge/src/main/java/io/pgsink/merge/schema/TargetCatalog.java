package io.pgsink.merge.schema;

import io.pgsink.copy.sql.PrimaryKeys;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads target tables from {@code pg_catalog}. The queries work on PostgreSQL 9.4+ and therefore on
 * Greenplum 6 (PostgreSQL 9.4 based) and 7, which is why they use {@code generate_subscripts}
 * rather than {@code array_position}.
 *
 * <p>Greenplum 6, 7 and Apache Cloudberry describe a table's distribution in
 * {@code gp_distribution_policy(localoid, policytype, numsegments, distkey int2vector, distclass)}:
 * {@code distkey} lists the distribution-key attribute numbers in key order, and is empty for
 * randomly distributed ({@code policytype 'p'}) and replicated ({@code 'r'}) tables. An
 * {@code int2vector} is an array of {@code int2} to {@code generate_subscripts} and subscripting,
 * as {@code pg_index.indkey} is in the primary-key query. (Greenplum 5 had
 * {@code attrnums int2[]} instead; {@link Dialect} refuses it.) The name is left unqualified: on
 * Greenplum {@code pg_catalog} is searched first, so no user table can shadow it, while tests of
 * the Greenplum dialect on PostgreSQL can stand a table of that shape in for it.
 */
public final class TargetCatalog
{
    @Language("SQL")
    private static final String COLUMNS = """
            SELECT c.oid, a.attname, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN t.typtype = 'd' THEN bt.typname ELSE t.typname END, a.attnotnull,
                   has_table_privilege(c.oid, 'UPDATE')
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid
            JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
            LEFT JOIN pg_catalog.pg_type bt ON bt.oid = t.typbasetype
            WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum""";

    @Language("SQL")
    private static final String DISTRIBUTION_KEY = """
            SELECT a.attname
            FROM gp_distribution_policy p
            CROSS JOIN generate_subscripts(p.distkey, 1) AS k(position)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = p.localoid AND a.attnum = p.distkey[k.position]
            WHERE p.localoid = ?
            ORDER BY k.position""";

    /**
     * Greenplum 6, 7 and Cloudberry list append-optimized tables (row and column oriented) in {@code pg_appendonly};
     * unqualified as {@code gp_distribution_policy}.
     */
    @Language("SQL")
    private static final String APPEND_OPTIMIZED = "SELECT 1 FROM pg_appendonly WHERE relid = ?";

    /** PostgreSQL 12+: generated columns, which no UPDATE may assign, and identity columns. */
    @Language("SQL")
    private static final String GENERATED_COLUMNS = "SELECT a.attname, a.attgenerated <> '', a.attidentity = 'a' FROM "
            + "pg_catalog.pg_attribute a"
            + " WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped AND (a.attgenerated <> '' OR "
            + "a.attidentity = 'a')";

    /**
     * The unique indexes and exclusion constraints a batch of rows with distinct keys can violate
     * ({@link TargetTable#uniqueIndexes}): not the primary key, not a unique index whose columns
     * include every primary-key column (rows of distinct keys never collide in it), not one checked
     * at the end of the statement ({@code DEFERRABLE}, {@code indimmediate} false). Partial and
     * expression indexes count ({@code indkey} holds 0 for an expression). PostgreSQL 9.4 catalog
     * (Greenplum 6): {@code int2vector} to {@code int2[]} is a binary-coercible cast.
     */
    @Language("SQL")
    private static final String UNIQUE_INDEXES = """
            SELECT c.relname
            FROM pg_catalog.pg_index i
            JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid = ? AND NOT i.indisprimary AND i.indimmediate AND (i.indisunique OR i.indisexclusion)
              AND NOT (i.indisunique AND EXISTS (
                  SELECT 1 FROM pg_catalog.pg_index p
                  WHERE p.indrelid = i.indrelid AND p.indisprimary AND p.indkey::int2[] <@ i.indkey::int2[]))
            ORDER BY c.relname""";

    private TargetCatalog() {}

    /** The table, or empty when it does not exist. */
    public static Optional<TargetTable> read(Connection connection, TableId id, Dialect dialect)
            throws SQLException
    {
        long oid = 0;
        boolean updatable = false;
        List<TargetColumn> columns = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(COLUMNS)) {
            statement.setString(1, id.schema());
            statement.setString(2, id.table());
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    oid = rows.getLong(1);
                    updatable = rows.getBoolean(6);
                    columns.add(new TargetColumn(rows.getString(2), rows.getString(3), rows.getString(4),
                            rows.getBoolean(5)));
                }
            }
        }
        if (columns.isEmpty()) {
            return Optional.empty();
        }
        if (dialect.features().readsGeneratedColumns(connection.getMetaData().getDatabaseMajorVersion())) {
            try (PreparedStatement statement = connection.prepareStatement(GENERATED_COLUMNS)) {
                statement.setLong(1, oid);
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        String name = rows.getString(1);
                        boolean generated = rows.getBoolean(2);
                        boolean identityAlways = rows.getBoolean(3);
                        columns.replaceAll(column -> column.name().equals(name)
                                ? new TargetColumn(column.name(), column.declaredType(), column.encodingType(),
                                        column.notNull(), generated, identityAlways)
                                : column);
                    }
                }
            }
        }
        List<String> primaryKey = PrimaryKeys.of(connection, oid);
        List<String> distributionKey = List.of();
        boolean appendOptimized = false;
        if (dialect.distribution().distributes()) {
            distributionKey = names(connection, DISTRIBUTION_KEY, oid);
            appendOptimized = !names(connection, APPEND_OPTIMIZED, oid).isEmpty();
        }
        List<String> uniqueIndexes = names(connection, UNIQUE_INDEXES, oid);
        return Optional.of(new TargetTable(id, columns, primaryKey, distributionKey, updatable, appendOptimized,
                uniqueIndexes));
    }

    /** Whether {@code id} names a table the user can see. */
    public static boolean exists(Connection connection, TableId id)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT 1 FROM pg_catalog.pg_class c JOIN "
                + "pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r', 'p')")) {
            statement.setString(1, id.schema());
            statement.setString(2, id.table());
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    static boolean schemaExists(Connection connection, String schema)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT 1 FROM pg_catalog.pg_namespace "
                + "WHERE nspname = ?")) {
            statement.setString(1, schema);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    static TargetTable require(Connection connection, TableId id, Dialect dialect)
            throws SQLException
    {
        return read(connection, id, dialect).orElseThrow(() -> new SinkException(ErrorCode.SCHEMA_MISMATCH,
                "Target table " + id + " does not exist (or the target user cannot see it). Create it with the source "
                + "table's columns and primary key."));
    }

    private static List<String> names(Connection connection, @Language("SQL") String sql, long oid)
            throws SQLException
    {
        List<String> names = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setLong(1, oid);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    names.add(rows.getString(1));
                }
            }
        }
        return names;
    }
}
