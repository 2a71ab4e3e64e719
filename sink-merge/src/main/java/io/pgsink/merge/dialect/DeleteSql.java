package io.pgsink.merge.dialect;

import io.pgsink.merge.table.TargetTable;

/** How a dialect deletes every key touched by a flush. */
public interface DeleteSql
{
    /** Deletes from {@code target} every row whose key is in the staging table (deletes and upserts alike). */
    String deleteTouchedKeys(TargetTable target, String stagingName);

    /** Deletes from {@code target} the rows of the keys the staging table holds deletes of. */
    String deleteStagedDeletes(TargetTable target, String stagingName);

    /**
     * Deletes from {@code target} the rows of the keys the staging table holds rows of, not its deletes
     * ({@code delete.mode=soft}, see {@code SoftDeletes}).
     */
    String deleteStagedRows(TargetTable target, String stagingName);
}
