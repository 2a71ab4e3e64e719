package io.pgsink.connector.standalone.verify;

import io.pgsink.core.change.TableId;
import io.pgsink.merge.verify.ComparedSide;
import io.pgsink.merge.verify.RowCopy;

import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * A captured source table and the target table it is routed to, as compared: the source's columns
 * the sink writes, under their target names on the target side, keyed by the source's primary key.
 *
 * @param keyNames the key's column names on the target, for reports
 * @param copy how {@code pgsink repair} copies rows of given keys from the source to the target
 */
record TablePair(ComparedSide source, ComparedSide target, List<String> keyNames, RowCopy copy)
{
    TablePair
    {
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        keyNames = List.copyOf(keyNames);
        requireNonNull(copy, "copy is null");
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
