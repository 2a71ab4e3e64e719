package io.pgsink.core.change;

import io.pgsink.core.error.SinkException;

import java.util.List;
import java.util.Optional;

/**
 * The source database's catalog, where the adapter can read it (the standalone service can; a Kafka
 * Connect sink knows only its records). The sink asks it when a table's schema changes, to tell a
 * renamed column from a dropped and an added one, and to learn what rows that existed before a
 * column was added hold in it when the change events carry no default.
 */
@FunctionalInterface
public interface SourceColumns
{
    /** No catalog: the sink knows what the change events say, nothing more. */
    SourceColumns UNKNOWN = table -> Optional.empty();

    /**
     * The table's columns now, in attribute-number order, dropped ones included; empty when the
     * catalog cannot be read or the table is gone.
     *
     * @throws SinkException when the source cannot be asked
     */
    Optional<List<SourceAttribute>> read(TableId table);

    /**
     * The table's columns as the catalog showed them when the sink started, before it applied any
     * change: what a table's columns were before a first change of it arrives with others. Empty
     * when unknown.
     */
    default Optional<List<SourceAttribute>> initial(TableId table)
    {
        return Optional.empty();
    }
}
