package io.pgsink.merge;

/** Names of pgsink's own staging columns; the {@code __pgsink_} prefix keeps them apart from user columns. */
final class StagingColumns
{
    /** {@code true} for a key to delete, {@code false} for a row to write. */
    static final String DELETE = "__pgsink_delete";
    /**
     * NULL, or one character per staged column, {@code 1} where the value was unavailable (an
     * unchanged TOAST value) and must be taken from the current target row.
     */
    static final String UNAVAILABLE = "__pgsink_unavailable";

    private StagingColumns() {}
}
