package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import io.pgsink.core.error.SinkException;

import java.util.Optional;

/**
 * What the stream of changes cannot say about the captured source tables (pgoutput streams rows,
 * not DDL), asked by the {@code SinkChangeConsumer} on the engine's thread. See {@link SourceTableWatch}.
 */
public interface SourceTableCheck
{
    /** Nothing is checked. */
    SourceTableCheck NONE = new SourceTableCheck()
    {
        @Override
        public void beforeFirstChange(TableId table) {}

        @Override
        public Optional<SinkException> failure()
        {
            return Optional.empty();
        }
    };

    /**
     * Called before the first change of {@code table} in an engine run is applied.
     *
     * @throws SinkException when that change must not be applied (the table was renamed from another captured one, or,
     *         under its old name, renamed while pgsink was stopped after the change was made)
     */
    void beforeFirstChange(TableId table);

    /** A change of a source table that stops the sink, once one was seen. */
    Optional<SinkException> failure();
}
