package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.TableSchema;

import static java.util.Objects.requireNonNull;

/**
 * A captured source table as the load's snapshot shows it.
 *
 * @param schema columns Debezium streams (generated and excluded columns left out) with their
 *         {@code format_type} types, and the primary key
 * @param bytes the heap's size in bytes at the snapshot (every row the snapshot sees lies in it)
 * @param estimatedRows {@code pg_class.reltuples}, for progress estimates only; -1 when unknown
 * @param partitioned a partitioned table (read through its root, {@code publish.via.partition.root}):
 *         {@code bytes} and {@code estimatedRows} are its partitions' sums, and it is read with
 *         {@code COPY (SELECT ...)}, since COPY cannot read a partitioned table directly
 * @param builtInTypes whether every column of {@code schema} has a type of the server's own catalog
 *         (no enum, domain, composite or extension type), which binary COPY needs
 */
record SourceTable(TableSchema schema, long bytes, long estimatedRows, boolean partitioned, boolean builtInTypes)
{
    SourceTable
    {
        requireNonNull(schema, "schema is null");
    }
}
