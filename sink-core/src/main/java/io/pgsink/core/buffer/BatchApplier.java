package io.pgsink.core.buffer;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.Map;

/**
 * Applies merged batches to a target and stores source positions with them. Implemented by
 * {@code sink-merge} for PostgreSQL and Greenplum; tests use in-memory fakes.
 *
 * <p>Not thread-safe: the sink calls it from its one owning thread.
 */
public interface BatchApplier
        extends AutoCloseable
{
    /**
     * Applies the batch and stores its positions atomically: after a crash either all of it is in
     * the target or none of it. Applying the same batch twice gives the same final state.
     *
     * @throws SinkException naming table, key and column where one row is at fault, with
     *         {@link ErrorCode#TRANSIENT} when retrying the same batch may succeed
     */
    void apply(Batch batch);

    /**
     * Whether the changes of {@code table} are appended one by one, as a history of the table
     * ({@code table.mode=history}), rather than merged by key; the sink buffers them accordingly.
     */
    default boolean appendsHistory(TableId table)
    {
        return false;
    }

    /** The positions stored by the last committed batch, per source partition. */
    Map<String, SourcePosition> committedPositions();

    @Override
    void close();
}
