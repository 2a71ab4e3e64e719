package io.pgsink.connector.standalone.load;

/** The format of the COPY statements of an initial load ({@code initial.load.copy.format}). */
public enum LoadFormat
{
    /** PostgreSQL's text format: each value as its type prints it, read back by the target type's input function. */
    TEXT,
    /**
     * PostgreSQL's binary format, for a table whose columns all have a built-in type, the same on
     * both sides; other tables go as text.
     */
    BINARY,
    /**
     * {@link #BINARY} where both servers are PostgreSQL of the same major version (a type's binary
     * format may change between versions), else {@link #TEXT}.
     */
    AUTO;

    /**
     * The format of one table's COPY.
     *
     * @param builtInTypes whether every column the table loads has a type of the server's own
     *         catalog: a binary array or composite value names its element types by OID, which
     *         differ between databases for enums, domains and extension types
     * @param sameServers whether source and target are PostgreSQL of the same major version
     */
    LoadFormat forTable(boolean builtInTypes, boolean sameServers)
    {
        return switch (this) {
            case TEXT -> TEXT;
            case BINARY -> builtInTypes ? BINARY : TEXT;
            case AUTO -> builtInTypes && sameServers ? BINARY : TEXT;
        };
    }

    String option()
    {
        return switch (this) {
            case TEXT -> "";
            case BINARY -> " (FORMAT binary)";
            case AUTO -> throw new IllegalStateException("auto is decided per table");
        };
    }
}
