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
    private static final String PLACED = "pgsink_verify_placed";
    private static final String SEGMENT = "pgsink_placed_on";

    /**
     * Whether the temporary table is hashed as the table (parameter: its qualified name) is: over as
     * many segments, with the same operator classes; no row when the catalog has no policy for them.
     */
    private static final String SAME_HASHING = "SELECT placed.numsegments = policy.numsegments"
            + " AND placed.distclass::text = policy.distclass::text FROM gp_distribution_policy placed,"
            + " gp_distribution_policy policy WHERE placed.localoid = '" + PLACED + "'::regclass"
            + " AND policy.localoid = ?::regclass";

    private MisplacedRows() {}

    /**
     * The misplaced rows of a table: how many, and the keys of at most {@code limit} of them.
     *
     * @param count every misplaced visible row of the table
     * @param keys at most the limit's keys, each column as text
     * @param searched false when the table is not hashed as a new table would be (over fewer segments
     *         than the cluster has, or with other hash operator classes), so that its owners are not known
     */
    public record Found(long count, List<List<String>> keys, boolean searched)
    {
        public Found
        {
            keys = List.copyOf(keys);
        }
    }

    /**
     * Finds the visible rows of {@code side}'s table that are not on their key's owning segment, with
     * its values or without: each row's key columns and segment are copied into a temporary table
     * distributed by the table's distribution key, which moves each key to its owner, and a row whose
     * owner is not the segment it came from is misplaced (the key columns are copied as an expression,
     * so that the planner moves every row to its owner rather than take them to be there already). One
     * statement reads the table (a snapshot), and only key columns move; a row written through the
     * coordinator is always on its owner, so changes made meanwhile are never found. On a connection in
     * autocommit mode.
     *
     * @param distributionKey the table's distribution-key columns, each one of {@code side}'s key
     *         columns (empty for a randomly distributed table: no row is misplaced)
     */
    public static Found find(Connection connection, ComparedSide side, List<String> distributionKey, int limit)
            throws SQLException
    {
        if (distributionKey.isEmpty()) {
            return new Found(0, List.of(), true);
        }
        StringJoiner columns = new StringJoiner(", ");
        for (String column : side.keyColumns()) {
            // an expression, not the column: the planner takes a column distributed as the temporary table
            // is to be already in place and moves no row; an expression of it is sent to its owner
            columns.add(distributionKey.contains(column)
                    ? "CASE WHEN gp_segment_id >= 0 THEN " + quote(column) + " END AS " + quote(column)
                    : quote(column));
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TEMPORARY TABLE " + PLACED + " AS SELECT " + columns + ", gp_segment_id AS "
                    + SEGMENT + " FROM " + side.qualified()
                    + (side.visibleRows().isEmpty() ? "" : " WHERE (" + side.visibleRows() + ")")
                    + " DISTRIBUTED BY (" + distributed(distributionKey) + ")");
        }
        try {
            try (PreparedStatement same = connection.prepareStatement(SAME_HASHING)) {
                same.setString(1, side.qualified());
                try (ResultSet rows = same.executeQuery()) {
                    if (rows.next() && !rows.getBoolean(1)) {
                        return new Found(0, List.of(), false);
                    }
                }
            }
            return misplaced(connection, side, limit);
        }
        finally {
            try (Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE " + PLACED);
            }
        }
    }

    /** The rows of {@link #PLACED} that came from another segment than the one that owns their key. */
    private static Found misplaced(Connection connection, ComparedSide side, int limit)
            throws SQLException
    {
        long count = 0;
        List<List<String>> keys = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT " + side.keyText()
                + ", count(*) OVER () FROM " + PLACED + " WHERE " + SEGMENT + " <> gp_segment_id LIMIT ?")) {
            select.setInt(1, limit);
            try (ResultSet rows = select.executeQuery()) {
                int keyColumns = side.keyColumns().size();
                while (rows.next()) {
                    keys.add(ComparedSide.key(rows, keyColumns));
                    count = rows.getLong(keyColumns + 1);
                }
            }
        }
        if (keys.isEmpty() && limit <= 0) {
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT count(*) FROM " + PLACED + " WHERE "
                            + SEGMENT + " <> gp_segment_id")) {
                rows.next();
                count = rows.getLong(1);
            }
        }
        return new Found(count, keys, true);
    }

    private static String distributed(List<String> distributionKey)
    {
        StringJoiner distributed = new StringJoiner(", ");
        distributionKey.forEach(column -> distributed.add(quote(column)));
        return distributed.toString();
    }

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
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TEMPORARY TABLE " + OWNERS + " (" + columns + ") DISTRIBUTED BY ("
                    + distributed(distributionKey) + ")");
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
                    owned.add(ComparedSide.key(rows, keyColumns));
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
