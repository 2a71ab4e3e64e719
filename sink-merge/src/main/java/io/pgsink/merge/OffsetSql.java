package io.pgsink.merge;

/** How a dialect stores source positions in the offsets table. */
interface OffsetSql
{
    String createOffsetsTable(String qualifiedOffsetsTable);

    /**
     * Statements that store one position, each with parameters (offset, sink name, partition).
     * Executed in order; a later statement runs only when the previous one changed no row.
     */
    java.util.List<String> storeOffset(String qualifiedOffsetsTable);
}
