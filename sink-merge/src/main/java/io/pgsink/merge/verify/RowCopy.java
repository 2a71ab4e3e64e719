package io.pgsink.merge.verify;

import java.util.List;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * The SQL that copies given keys' rows from a source table to its target table, for
 * {@code pgsink repair}: the source's rows read as text (under the same session settings as the
 * initial load's text COPY, so each value travels as the initial load carries it), the target's
 * rows of those keys deleted (or, with soft deletes, marked deleted) and the source's inserted,
 * each value read by the target column type's input function.
 *
 * @param source the source side: its table and key
 * @param target the target side: its table, key and visible rows
 * @param sourceColumns the source columns copied, in order
 * @param targetColumns the target columns they go to, in the same order
 * @param targetTypes the target columns' declared types
 * @param markDeleted with soft deletes, the assignments that mark a target row deleted; empty for hard deletes
 */
public record RowCopy(ComparedSide source, ComparedSide target, List<String> sourceColumns, List<String> targetColumns,
        List<String> targetTypes, String markDeleted)
{
    public RowCopy
    {
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        sourceColumns = List.copyOf(sourceColumns);
        targetColumns = List.copyOf(targetColumns);
        targetTypes = List.copyOf(targetTypes);
        requireNonNull(markDeleted, "markDeleted is null");
        if (sourceColumns.size() != targetColumns.size() || targetColumns.size() != targetTypes.size()) {
            throw new IllegalArgumentException("source columns " + sourceColumns + ", target columns "
                    + targetColumns + " and types "
                    + targetTypes + " differ in number");
        }
    }

    /**
     * The source rows of {@code keys} keys: the key's columns as text, then each copied column as
     * text. Parameters: each key's columns.
     */
    public String readSource(int keys)
    {
        StringJoiner columns = new StringJoiner(", ");
        sourceColumns.forEach(column -> columns.add(ComparedSide.text(column)));
        return "SELECT " + source.keyText() + ", " + columns + " FROM " + source.qualified()
                + " WHERE " + source.keyIn(keys);
    }

    /** Removes the target rows of {@code keys} keys, soft-deleted ones too. Parameters: each key's columns. */
    public String deleteTarget(int keys)
    {
        return "DELETE FROM " + target.qualified() + " WHERE " + target.keyIn(keys);
    }

    /**
     * Removes the visible target rows of {@code keys} keys the source does not have: with soft
     * deletes, marks them deleted, as a streamed delete would. Parameters: each key's columns.
     */
    public String removeTarget(int keys)
    {
        if (markDeleted.isEmpty()) {
            return deleteTarget(keys);
        }
        String visible = target.visibleRows().isEmpty() ? "" : "(" + target.visibleRows() + ") AND ";
        return "UPDATE " + target.qualified() + " SET " + markDeleted + " WHERE " + visible + target.keyIn(keys);
    }

    /** Inserts one row; parameters: each copied column's text, in order. */
    public String insertTarget()
    {
        StringJoiner columns = new StringJoiner(", ");
        StringJoiner values = new StringJoiner(", ");
        for (int i = 0; i < targetColumns.size(); i++) {
            columns.add(quote(targetColumns.get(i)));
            values.add("CAST(? AS " + targetTypes.get(i) + ")");
        }
        return "INSERT INTO " + target.qualified() + " (" + columns + ") VALUES (" + values + ")";
    }
}
