package io.pgsink.merge.verify;

import io.pgsink.core.change.TableId;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * One side of a table comparison (the source table or its target table) and the SQL that reads it
 * by ranges of its primary key: chunk boundaries, a chunk's row count and hash, a chunk's keys with
 * their row hashes, and the row hashes of given keys.
 *
 * <p>A row's text is {@code ROW(e1, e2, ...)::text} over {@code valueExpressions}, each a column
 * cast to text, in the same order on both sides, so that a row has the same text on the source and
 * on the target exactly when every compared value prints the same. A chunk's hash is the sum of
 * a 64-bit hash of each row text ({@link ChunkHash}), computed by the server: order-independent, so
 * the server may scan in any order, and no row travels to the client. A row's own hash, for the
 * rows of a differing chunk, is the md5 of its text. Keys travel as text and are
 * bound back with a cast to the side's key type ({@code ?::type}), so that ranges compare as the
 * key's type orders.
 *
 * @param table the table read
 * @param keyColumns its primary-key columns, in key order
 * @param keyTypes their types as {@code format_type} prints them
 * @param valueExpressions the compared values, each a SQL expression of type text
 * @param visibleRows a SQL condition the rows compared meet (soft-deleted target rows are absent), or empty
 */
public record ComparedSide(TableId table, List<String> keyColumns, List<String> keyTypes, List<String> valueExpressions,
        String visibleRows)
{
    public ComparedSide
    {
        requireNonNull(table, "table is null");
        keyColumns = List.copyOf(keyColumns);
        keyTypes = List.copyOf(keyTypes);
        valueExpressions = List.copyOf(valueExpressions);
        requireNonNull(visibleRows, "visibleRows is null");
        if (keyColumns.isEmpty() || keyColumns.size() != keyTypes.size()) {
            throw new IllegalArgumentException("key columns " + keyColumns + " and key types " + keyTypes
                    + " must be as many, and at least one");
        }
    }

    /** {@code column::text}, the value of a column compared as it is. */
    public static String text(String column)
    {
        return quote(column) + "::text";
    }

    /**
     * A source column as the target stores it: its text read by the target type's input function,
     * printed again, which is what streaming and the initial load write into a target column of
     * another type ({@code numeric(12,2)} into {@code numeric}, {@code int} into {@code bigint}).
     */
    public static String textAs(String column, String targetType)
    {
        return quote(column) + "::text::" + targetType + "::text";
    }

    /**
     * The key of the row at {@code offset} after the lower bound in key order, up to the upper bound
     * (each bound only when asked for), each key column as text: the upper end of a chunk of
     * {@code offset + 1} rows. Parameters: the lower bound's key columns, the upper's, then the offset.
     */
    public String nextBoundary(boolean lower, boolean upper)
    {
        // qualified: a bare name in ORDER BY would sort by the select list's text of the key
        StringJoiner order = new StringJoiner(", ");
        keyColumns.forEach(column -> order.add(qualified() + "." + quote(column)));
        return "SELECT " + keyText() + " FROM " + qualified() + where(lower, upper) + " ORDER BY " + order
                + " OFFSET ? LIMIT 1";
    }

    /**
     * The row count and hash (numeric, as text) of the rows whose key is after the lower and at most
     * the upper bound. Parameters: the lower bound's key columns (when {@code lower}), then the
     * upper's (when {@code upper}).
     */
    public String chunkSummary(boolean lower, boolean upper, ChunkHash hash)
    {
        return "SELECT count(*), coalesce(sum(" + hash.rowHash(rowText()) + "), 0)::text FROM "
                + qualified() + where(lower, upper);
    }

    /** The keys (each column as text) and row md5s of a chunk, parameters as {@link #chunkSummary}. */
    public String chunkRows(boolean lower, boolean upper)
    {
        return "SELECT " + keyText() + ", " + rowMd5() + " FROM " + qualified() + where(lower, upper);
    }

    /**
     * The keys (each column as text) and row md5s of the visible rows with one of {@code keys} keys;
     * parameters: each key's columns in turn.
     */
    public String rowsByKey(int keys)
    {
        return "SELECT " + keyText() + ", " + rowMd5() + " FROM " + qualified() + " WHERE " + visible() + keyIn(keys);
    }

    /** {@code (k1, k2) IN ((?::t1, ?::t2), ...)}: the condition for {@code keys} keys, each key column a parameter. */
    public String keyIn(int keys)
    {
        StringJoiner list = new StringJoiner(", ", "(", ")");
        for (int i = 0; i < keys; i++) {
            list.add(keyParameters());
        }
        return "(" + keyList() + ") IN " + list;
    }

    /** The key columns, each as text, for a select list. */
    public String keyText()
    {
        StringJoiner list = new StringJoiner(", ");
        keyColumns.forEach(column -> list.add(text(column)));
        return list.toString();
    }

    /** A key read back: the first {@code columns} columns of the current row, as {@link #keyText} selects them. */
    public static List<String> key(ResultSet rows, int columns)
            throws SQLException
    {
        List<String> key = new ArrayList<>(columns);
        for (int i = 1; i <= columns; i++) {
            key.add(rows.getString(i));
        }
        return key;
    }

    /** The table, quoted. */
    public String qualified()
    {
        return quote(table.schema()) + "." + quote(table.table());
    }

    private String where(boolean lower, boolean upper)
    {
        StringJoiner conditions = new StringJoiner(" AND ", " WHERE ", "").setEmptyValue("");
        if (!visibleRows.isEmpty()) {
            conditions.add("(" + visibleRows + ")");
        }
        if (lower) {
            conditions.add("(" + keyList() + ") > " + keyParameters());
        }
        if (upper) {
            conditions.add("(" + keyList() + ") <= " + keyParameters());
        }
        return conditions.toString();
    }

    private String visible()
    {
        return visibleRows.isEmpty() ? "" : "(" + visibleRows + ") AND ";
    }

    private String rowMd5()
    {
        return "md5(" + rowText() + ")";
    }

    private String rowText()
    {
        return "ROW(" + String.join(", ", valueExpressions) + ")::text";
    }

    String keyParameters()
    {
        StringJoiner parameters = new StringJoiner(", ", "(", ")");
        for (String type : keyTypes) {
            parameters.add("?::" + type);
        }
        return parameters.toString();
    }

    private String keyList()
    {
        StringJoiner list = new StringJoiner(", ");
        keyColumns.forEach(column -> list.add(quote(column)));
        return list.toString();
    }

}
