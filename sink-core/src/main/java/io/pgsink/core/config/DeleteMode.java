package io.pgsink.core.config;

/** {@code delete.mode}: what a source delete does to the target row of a merged table. */
public enum DeleteMode
{
    /** The row is deleted. */
    HARD,
    /**
     * The row is kept and marked deleted ({@code delete.flag.column} set to true and/or
     * {@code delete.timestamp.column} to the source commit time of the delete); a later insert of
     * the key writes the row anew and clears the marks.
     */
    SOFT,
}
