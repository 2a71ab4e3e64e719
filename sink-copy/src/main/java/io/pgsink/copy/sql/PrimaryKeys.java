package io.pgsink.copy.sql;

import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** The primary-key columns of a table, in key order, read from a PostgreSQL or Greenplum catalog. */
public final class PrimaryKeys
{
    @Language("SQL")
    private static final String PRIMARY_KEY = """
            SELECT a.attname
            FROM pg_catalog.pg_index i
            CROSS JOIN generate_subscripts(i.indkey, 1) AS k(position)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[k.position]
            WHERE i.indrelid = ? AND i.indisprimary
            ORDER BY k.position""";

    private PrimaryKeys() {}

    /** The key columns of the table with {@code oid}; empty for a table without a primary key. */
    public static List<String> of(Connection connection, long oid)
            throws SQLException
    {
        List<String> columns = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(PRIMARY_KEY)) {
            statement.setLong(1, oid);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    columns.add(rows.getString(1));
                }
            }
        }
        return columns;
    }
}
