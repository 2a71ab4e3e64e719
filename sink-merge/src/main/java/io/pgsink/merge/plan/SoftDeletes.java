package io.pgsink.merge.plan;

import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.StagingColumns;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.List;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * {@code delete.mode=soft}: the statements that keep a deleted key's row and mark it, in place of
 * the ones that delete it. Every change is staged with its whole row and its metadata values (for
 * a delete: the operation {@code d}, the deleted flag true, the delete's times), and
 * <ul>
 * <li>{@code MERGE} (PostgreSQL 15+) updates a deleted key's metadata columns instead of
 *     deleting its row ({@link #mergeDeleteAction});</li>
 * <li>the upsert (Greenplum 7, Cloudberry) and delete-insert update the metadata columns of the
 *     staged deletes' rows ({@link #markStagedDeletes}) instead of deleting them; delete-insert
 *     deletes and inserts only the keys that have a row.</li>
 * </ul>
 * The other columns keep the row's last values. A row staged for a key later (a re-insert) writes
 * the whole row with the deleted flag false and the deleted timestamp NULL, as any row.
 */
public final class SoftDeletes
{
    private SoftDeletes() {}

    /** The {@code MERGE} action for a staged delete of a key the target holds. */
    static String mergeDeleteAction(List<TargetColumn> metadata)
    {
        return "UPDATE SET " + assignments(metadata);
    }

    /**
     * Sets the metadata columns of the target rows of the staged deletes to their staged values.
     * As the deletes it replaces, it probes the primary-key index once per staged key (hash and
     * merge joins off for the transaction; see {@code GreenplumDialect} for the measurement).
     */
    static String markStagedDeletes(TargetTable target, List<TargetColumn> metadata, String stagingName)
    {
        StringJoiner keyMatch = new StringJoiner(" AND ");
        for (String column : target.primaryKey()) {
            keyMatch.add("t." + quote(column) + " = s." + quote(column));
        }
        return "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                + "UPDATE " + Statements.qualified(target.id()) + " AS t SET " + assignments(metadata) + " FROM "
                + quote(stagingName) + " AS s WHERE " + keyMatch
                + " AND NOT s." + quote(StagingColumns.INSERT);
    }

    /**
     * Delete-insert with soft deletes: the keys that have a row are deleted and inserted again, the deleted ones
     * marked.
     */
    static String deleteInsert(Dialect dialect, TargetTable target, List<TargetColumn> columns,
            List<TargetColumn> metadata, String stagingName)
    {
        return dialect.delete().deleteStagedRows(target, stagingName) + "; "
                + markStagedDeletes(target, metadata, stagingName) + "; "
                + Statements.insertFromStaging(target.id(), columns, stagingName);
    }

    private static String assignments(List<TargetColumn> metadata)
    {
        StringJoiner assignments = new StringJoiner(", ");
        for (TargetColumn column : metadata) {
            // the target alias is not allowed on the left of SET
            assignments.add(quote(column.name()) + " = s." + quote(column.name()));
        }
        return assignments.toString();
    }
}
