package io.pgsink.connector.standalone.verify;

import io.pgsink.core.change.TableSchema;

import io.pgsink.core.change.TableId;
import io.pgsink.merge.verify.ComparedSide;

import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * A captured source table and the target table it is routed to, as compared: the source's columns
 * the sink writes, under their target names on the target side, keyed by the source's primary key.
 *
 * @param keyNames the key's column names on the target, for reports
 * @param schema the source table's row shape, as the service's changes carry it (every column, in
 *         the source's order, before column selection)
 */
record TablePair(ComparedSide source, ComparedSide target, List<String> keyNames, TableSchema schema)
{
    TablePair
    {
        requireNonNull(schema, "schema is null");
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        keyNames = List.copyOf(keyNames);
    }

    TableId sourceTable()
    {
        return source.table();
    }

    TableId targetTable()
    {
        return target.table();
    }

    /** {@code source -> target}, or the table's name when both are the same. */
    String describe()
    {
        return source.table().equals(target.table())
                ? source.table().toString()
                : source.table() + " -> " + target.table();
    }
}
