package io.pgsink.merge.table;

/** Names of pgsink's own staging columns; the {@code __pgsink_} prefix keeps them apart from user columns. */
public final class StagingColumns
{
    /**
     * {@code true} for a row to insert from the staging table (one whose unchanged TOAST values are
     * filled from the target first), {@code false} for a key that is only deleted.
     */
    public static final String INSERT = "__pgsink_insert";
    /**
     * NULL, or one character per staged column, {@code 1} where the value was unavailable (an
     * unchanged TOAST value) and must be taken from the current target row.
     */
    public static final String UNAVAILABLE = "__pgsink_unavailable";

    /**
     * The {@code position}-th primary-key column (in the target's key order) of the key whose
     * target row fills unavailable values, when it is not the row's own key (its key changed in
     * the batch); NULL otherwise.
     */
    public static String fill(int position)
    {
        return "__pgsink_fill_" + position;
    }

    private StagingColumns() {}
}
