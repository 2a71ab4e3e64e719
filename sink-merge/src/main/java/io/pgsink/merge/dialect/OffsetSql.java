package io.pgsink.merge.dialect;

import java.util.List;
import java.util.Optional;

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

    /**
     * Where positions are stored last: the statement, with the sink name as its one parameter, that
     * holds off a sink's flushes until the transaction ends ({@code exclusive}: what
     * {@code pgsink repair} takes before it reads the source) or that a flush storing positions runs
     * first (shared: it waits for a repair that holds the exclusive form). A flush then waits before
     * it locks any table, rather than hold a table the repair writes next while it waits for the
     * repair's lock of the positions (on Greenplum, whose UPDATE and DELETE lock whole tables, a
     * wait that only the repair's lock timeout ends). Empty where positions are stored first: a
     * flush then takes their row lock first, and the repair's lock of those rows does this.
     */
    Optional<String> flushLock(boolean exclusive);
}
