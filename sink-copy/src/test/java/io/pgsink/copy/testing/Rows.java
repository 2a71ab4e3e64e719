package io.pgsink.copy.testing;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** Reads query results as text, the form tests compare source and target rows in. */
public final class Rows
{
    private Rows() {}

    /** Every row of {@code sql} on {@code connection}, each column as text (NULL as null). */
    public static List<List<String>> query(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(sql)) {
            List<List<String>> result = new ArrayList<>();
            int columns = rows.getMetaData().getColumnCount();
            while (rows.next()) {
                List<String> row = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    row.add(rows.getString(i));
                }
                result.add(row);
            }
            return result;
        }
    }
}
