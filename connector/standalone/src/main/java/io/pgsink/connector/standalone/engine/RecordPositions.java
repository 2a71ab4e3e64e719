package io.pgsink.connector.standalone.engine;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;

import java.util.Map;

/**
 * The {@link SourcePosition} of each Debezium record, for {@link SinkChangeConsumer}, and whether the
 * position of a record without a change may be stored. Called per record: the partition, equal for
 * every record, is serialized once.
 *
 * <p>Owned by the engine's polling thread; not thread-safe.
 */
final class RecordPositions
{
    /** Whether the positions of records without a change may be stored (see {@link #storesPosition}). */
    private boolean resumablePositions;
    @Nullable
    private Map<String, ?> lastPartition;
    @Nullable
    private String lastPartitionJson;

    /** @param positionStored whether the engine resumes from a position stored in the target */
    RecordPositions(boolean positionStored)
    {
        this.resumablePositions = positionStored;
    }

    /**
     * Whether the position of a record without a change (a heartbeat) may be stored. An engine that
     * starts without a stored position streams from the slot's own position (after the initial
     * load, its consistent point), but until the first change arrives Debezium's offset holds the
     * server's WAL position when the task started, without the processed and commit LSNs it
     * resumes from exactly: stored, a restart would begin there and skip the changes between the
     * slot's position and it. Such positions are not stored until one that names the processed or
     * commit LSN has been seen.
     */
    boolean storesPosition(SourceRecord record)
    {
        if (!resumablePositions && record.sourceOffset() != null
                && (record.sourceOffset().containsKey("lsn_proc") || record.sourceOffset().containsKey("lsn_commit"))) {
            resumablePositions = true;
        }
        return resumablePositions;
    }

    SourcePosition of(SourceRecord record)
    {
        Map<String, ?> partition = record.sourcePartition();
        // Debezium hands out equal partition maps for every record: serialize once
        if (lastPartitionJson == null || !partition.equals(lastPartition)) {
            lastPartition = partition;
            lastPartitionJson = OffsetJson.write(partition);
        }
        // written only for the positions stored (the last of a flush per partition) or named in an error
        Map<String, ?> offset = record.sourceOffset();
        return SourcePosition.deferred(lastPartitionJson, () -> OffsetJson.write(offset));
    }
}
