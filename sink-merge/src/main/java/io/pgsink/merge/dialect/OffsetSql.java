package io.pgsink.merge.dialect;

import java.util.List;

/** How a dialect stores source positions in the offsets table (whose DDL is in {@code SinkTables}). */
public interface OffsetSql
{
    /**
     * Statements that store one position, each with parameters (offset, sink name, partition).
     * Executed in order; a later statement runs only when the previous one changed no row. A
     * statement that returns a row returns the transaction's id ({@code txid_current()}).
     */
    List<String> storeOffset(String qualifiedOffsetsTable);

    /**
     * Whether a flush stores its positions after its data rather than first. Where the statements
     * lock the whole offsets table (Greenplum's UPDATE, unless the global deadlock detector is on),
     * storing them last holds that lock for the shortest time, so that other sinks or Connect tasks
     * sharing the table wait least; elsewhere first, so that pgjdbc's BEGIN travels with them.
     */
    boolean storesPositionsLast();
}
