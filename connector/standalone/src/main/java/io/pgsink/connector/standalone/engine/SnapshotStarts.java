package io.pgsink.connector.standalone.engine;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.TableId;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import java.util.HashSet;
import java.util.Set;

/**
 * Which snapshot row starts its table's snapshot in an engine run, for {@link SinkChangeConsumer},
 * which empties the target table before it.
 *
 * <p>Owned by the engine's polling thread; not thread-safe.
 */
final class SnapshotStarts
{
    /** Tables whose snapshot started in this engine run. */
    private final Set<TableId> snapshotTables = new HashSet<>();

    /**
     * Whether this is the first snapshot row of its table in this engine run. An engine run snapshots
     * a table at most once (Debezium redoes an interrupted snapshot from the start after a restart),
     * except for incremental snapshots, whose chunks merge into a streaming table and never empty it.
     */
    boolean startsTableSnapshot(ChangeEvent event, SourceRecord record)
    {
        if (event.operation() != Operation.READ || snapshotTables.contains(event.table())) {
            return false;
        }
        if (record.value() instanceof Struct envelope && envelope.schema().field("source") != null) {
            Struct source = envelope.getStruct("source");
            if (source != null && source.schema().field("snapshot") != null
                    && "incremental".equals(source.getString("snapshot"))) {
                return false;
            }
        }
        snapshotTables.add(event.table());
        return true;
    }
}
