package io.pgsink.connector.kafka;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.MergeApplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * The task's {@link MergeApplier} as its sink sees it.
 *
 * <p>Stored positions are read per partition when Connect opens partitions, so the sink must
 * not read them when it is created (the target may not answer yet when the task starts).
 *
 * <p>A batch whose attempt failed with a lost connection may have committed all the same: the
 * connection can drop after the server committed and before its answer arrived. Applying it
 * again is harmless for tables with a key (every touched key is deleted first) but would
 * duplicate the rows of append-only tables, so after such a failure the batch is applied again
 * only if the target does not hold its positions yet.
 *
 * <p>Owned by the task's thread.
 */
final class TaskApplier
        implements BatchApplier
{
    private static final Logger log = LoggerFactory.getLogger(TaskApplier.class);

    private final String name;
    private final MergeApplier applier;
    private boolean outcomeUnknown;

    TaskApplier(String name, MergeApplier applier)
    {
        this.name = requireNonNull(name, "name is null");
        this.applier = requireNonNull(applier, "applier is null");
    }

    @Override
    public void apply(Batch batch)
    {
        if (outcomeUnknown && committed(batch)) {
            outcomeUnknown = false;
            log.info("{} - the last attempt to apply {} events committed before its connection was lost; not "
                    + "applying them again", name, batch.events());
            return;
        }
        try {
            applier.apply(batch);
            outcomeUnknown = false;
        }
        catch (SinkException e) {
            outcomeUnknown |= e.isTransient();
            throw e;
        }
    }

    /** Whether the target holds every position of the batch (positions only move forward). */
    private boolean committed(Batch batch)
    {
        if (batch.positions().isEmpty()) {
            return false;
        }
        Map<String, SourcePosition> stored = applier.committedPositions();
        for (SourcePosition position : batch.positions().values()) {
            SourcePosition storedPosition = stored.get(position.partition());
            if (storedPosition == null
                    || KafkaPositions.parseOffset(storedPosition) < KafkaPositions.parseOffset(position)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean appendsHistory(TableId table)
    {
        return applier.appendsHistory(table);
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        return Map.of();
    }

    @Override
    public void close()
    {
        applier.close();
    }
}
