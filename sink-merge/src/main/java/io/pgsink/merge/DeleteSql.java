package io.pgsink.merge;

/** How a dialect deletes every key touched by a flush. */
interface DeleteSql
{
    /** Deletes from {@code target} every row whose key is in the staging table (deletes and upserts alike). */
    String deleteTouchedKeys(TargetTable target, String stagingName);

    /** Deletes from {@code target} the rows of the keys the staging table holds deletes of. */
    String deleteStagedDeletes(TargetTable target, String stagingName);

    /**
     * Deletes from {@code target} the rows of the keys the staging table holds rows of, not its deletes
     * ({@code delete.mode=soft}, see {@link SoftDeletes}).
     */
    String deleteStagedRows(TargetTable target, String stagingName);
}
