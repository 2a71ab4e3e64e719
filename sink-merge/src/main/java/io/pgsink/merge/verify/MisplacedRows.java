package io.pgsink.merge.verify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Rows of a distributed target (Greenplum) that sit on a segment that does not own their key:
 * written there past the coordinator (in utility mode, or left by a failed expansion), where each
 * segment's unique index sees only its own rows, a key lookup goes to the owning segment only, and
 * the apply path's join on the key, distributed like the table, never meets them. Verify's range
 * scans read every segment and see them; {@link #delete} removes the misplaced copies of given keys,
 * so that the apply path can then write each key's one row where it belongs.
 *
 * <p>A key's owner is where the server puts a row of it: the segment of a row of the key in a
 * temporary table distributed by the target's distribution key.
 */
public final class MisplacedRows
{
    private static final String OWNERS = "pgsink_repair_owners";

    private MisplacedRows() {}

    /**
     * Deletes the rows of {@code keys} on {@code side}'s table that are not on their key's owning
     * segment, in the connection's transaction, on a connection that dispatches to every segment
     * ({@link io.pgsink.merge.dialect.DistributionSql#everySegmentSession}); returns how many.
     *
     * @param distributionKey the table's distribution-key columns, each one of {@code side}'s key columns
     */
    public static long delete(Connection connection, ComparedSide side, List<String> distributionKey,
            List<List<String>> keys)
            throws SQLException
    {
        if (keys.isEmpty() || distributionKey.isEmpty()) {
            return 0;
        }
        StringJoiner columns = new StringJoiner(", ");
        for (int i = 0; i < side.keyColumns().size(); i++) {
            columns.add(quote(side.keyColumns().get(i)) + " " + side.keyTypes().get(i));
        }
        StringJoiner distributed = new StringJoiner(", ");
        distributionKey.forEach(column -> distributed.add(quote(column)));
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TEMPORARY TABLE " + OWNERS + " (" + columns + ") DISTRIBUTED BY ("
                    + distributed + ")");
        }
        try {
            StringJoiner values = new StringJoiner(", ");
            for (int i = 0; i < keys.size(); i++) {
                values.add(side.keyParameters());
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + OWNERS + " VALUES "
                    + values)) {
                bind(insert, 1, keys);
                insert.executeUpdate();
            }
            // each key with its owner: few rows (the listed keys), so read to the client, then matched on
            // every segment, whatever plan a join would get
            List<List<String>> owned = new ArrayList<>();
            List<String> owners = new ArrayList<>();
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT " + side.keyText() + ", gp_segment_id FROM "
                            + OWNERS)) {
                int keyColumns = side.keyColumns().size();
                while (rows.next()) {
                    List<String> key = new ArrayList<>(keyColumns);
                    for (int i = 1; i <= keyColumns; i++) {
                        key.add(rows.getString(i));
                    }
                    owned.add(key);
                    owners.add(rows.getString(keyColumns + 1));
                }
            }
            StringJoiner misplaced = new StringJoiner(" OR ");
            for (int i = 0; i < owned.size(); i++) {
                misplaced.add("(" + side.keyIn(1) + " AND gp_segment_id <> ?::int)");
            }
            try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + side.qualified()
                    + " WHERE " + misplaced)) {
                int index = 1;
                for (int i = 0; i < owned.size(); i++) {
                    index = bind(delete, index, List.of(owned.get(i)));
                    delete.setString(index++, owners.get(i));
                }
                return delete.executeUpdate();
            }
        }
        finally {
            try (Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + OWNERS);
            }
        }
    }

    private static int bind(PreparedStatement statement, int first, List<List<String>> keys)
            throws SQLException
    {
        int index = first;
        for (List<String> key : keys) {
            for (String value : key) {
                statement.setString(index++, value);
            }
        }
        return index;
    }
}
