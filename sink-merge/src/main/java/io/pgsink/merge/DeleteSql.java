package io.pgsink.merge;

/** How a dialect deletes every key touched by a flush. */
interface DeleteSql
{
    /** Deletes from {@code target} every row whose key is in the staging table (deletes and upserts alike). */
    String deleteTouchedKeys(TargetTable target, String stagingName);
}
