package io.pgsink.merge.state;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import static java.util.Objects.requireNonNull;

/**
 * Another writer with the same {@code sink.name} claimed the fence (see {@link WriterFence}) since
 * this one did: the flush was rolled back, and this writer must stop writing: the standalone
 * service stops, a Kafka Connect task drops what it buffered for the partition. A
 * {@link ErrorCode#CONFIG} failure: two writers of one sink are a deployment mistake, or the other
 * took over from this one.
 */
public final class WriterFencedException
        extends SinkException
{
    private final String fence;

    WriterFencedException(String sinkName, String fence, long generation, String offsetsTable)
    {
        super(ErrorCode.CONFIG, "Another writer with sink.name " + sinkName + " took over"
                + (fence.isEmpty() ? "" : " " + fence)
                + " since this one claimed it (generation " + generation + " in " + offsetsTable
                + "): this writer's flush was rolled back and it stops writing."
                + " Run one pgsink service per sink.name (a second one started with the same name makes the "
                + "older one stop)");
        this.fence = requireNonNull(fence, "fence is null");
    }

    /** The fence another writer claimed: {@code ""} for the whole sink, else the source partition. */
    public String fence()
    {
        return fence;
    }
}
