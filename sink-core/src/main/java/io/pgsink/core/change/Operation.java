package io.pgsink.core.change;

/** What a change event did to its row. */
public enum Operation
{
    /** A new row ({@code c} in Debezium). */
    INSERT,
    /** A row read by the initial snapshot ({@code r}); applied like an insert. */
    READ,
    /** A changed row ({@code u}); its key may have changed. */
    UPDATE,
    /** A removed row ({@code d}). */
    DELETE,
    /** The whole table was emptied ({@code t}). */
    TRUNCATE,
}
