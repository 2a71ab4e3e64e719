package io.pgsink.connector.standalone.load;

/** The format of the COPY statements of an initial load ({@code initial.load.copy.format}). */
public enum LoadFormat
{
    /** PostgreSQL's text format: each value as its type prints it, read back by the target type's input function. */
    TEXT,
    /** PostgreSQL's binary format: only where a column has the same type on both sides (else that table falls back to text). */
    BINARY;

    String option()
    {
        return switch (this) {
            case TEXT -> "";
            case BINARY -> " (FORMAT binary)";
        };
    }
}
