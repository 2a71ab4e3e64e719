package io.pgsink.connector.standalone;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.core.Backoff;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.Operation;
import io.pgsink.core.Sink;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableId;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

import static java.util.Objects.requireNonNull;

/**
 * Feeds the Debezium engine's batches into the sink, one target transaction per engine batch, and
 * only then tells the engine the records are processed.
 *
 * <p>Why this order makes the result exactly-once: the sink writes the source offset of the last
 * record of the batch into the target's offsets table in the same transaction as the batch's rows.
 * Only after that commit does {@link DebeziumEngine.RecordCommitter#markProcessed} hand the records
 * back to the engine, whose offset commit lets the PostgreSQL connector confirm the LSN to the
 * replication slot. So the slot never runs ahead of the target: a crash at any point restarts from
 * the offset stored with the last committed data (which the engine reads through
 * {@link TargetOffsetBackingStore}), and the server still has every change after it.
 *
 * <p>Batch sizes follow the load: the engine's poll returns when {@code max.batch.size} records are
 * queued or {@code poll.interval.ms} has passed (both derived from {@code flush.max.events} and
 * {@code flush.interval.ms}), so a busy source gives full batches and a quiet one small batches
 * within the interval. The sink may also flush inside a batch when {@code buffer.max.bytes} is
 * reached; that only makes the stored position more recent, never ahead of the data.
 *
 * <p>The first snapshot row of each table in an engine run is preceded by a truncate of the table:
 * Debezium restarts an interrupted snapshot from scratch, at a later point of the source, so rows
 * the first attempt copied and that were deleted in between would otherwise stay in the target.
 *
 * <p>Debezium turns an update that changes the primary key into a delete of the old key (header
 * {@code __debezium.newkey}) directly followed by a create of the new key (header
 * {@code __debezium.oldkey}). Such a pair in one batch goes to {@link Sink#acceptKeyChange} as one
 * update, so that unchanged TOAST values of the create are filled from the old key's row. A pair
 * split across two engine batches is applied as a plain delete and insert; an unchanged TOAST value
 * in that insert then fails the flush, naming table and key. Both records carry the position of
 * their one source message, so the delete at the end of a batch is given the position before it:
 * stored with it, a crash before the next batch's flush would make Debezium resume after that
 * message and never send the create (a lost row, seen in {@code CrashRecoveryIT}).
 *
 * <p>A flush that fails with a {@linkplain SinkException#isTransient() transient} error (target
 * restarted, connection lost) is retried with backoff, since the sink keeps its buffers; any other
 * failure, or a transient one inside {@link Sink#accept}, ends the batch with the exception and the
 * engine stops, and the service decides whether to restart it.
 *
 * <p>Called by the engine's single polling thread (one task); not thread-safe otherwise.
 */
final class SinkChangeConsumer
        implements DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>>
{
    private static final Logger log = LoggerFactory.getLogger(SinkChangeConsumer.class);
    /** On the delete of a key change, the new key; on the create, the old one. */
    private static final String NEW_KEY_HEADER = "__debezium.newkey";
    private static final String OLD_KEY_HEADER = "__debezium.oldkey";

    private final String name;
    private final Sink sink;
    private final DebeziumRecordMapper mapper;
    private final SinkMetrics metrics;
    private final LongSupplier clock;
    private final Backoff backoff;
    private volatile boolean stopping;
    private volatile String lastPosition = "";
    /** The position the previous batch ended at; null before the first. */
    @Nullable
    private SourcePosition previousBatchEnd;
    /** Tables whose snapshot started in this engine run. */
    private final Set<TableId> snapshotTables = new HashSet<>();

    @Nullable
    private Map<String, ?> lastPartition;
    @Nullable
    private String lastPartitionJson;

    SinkChangeConsumer(String name, Sink sink, DebeziumRecordMapper mapper, SinkMetrics metrics, LongSupplier clock, Backoff backoff)
    {
        this.name = requireNonNull(name, "name is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.mapper = requireNonNull(mapper, "mapper is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.backoff = requireNonNull(backoff, "backoff is null");
    }

    @Override
    public void handleBatch(List<RecordChangeEvent<SourceRecord>> records, DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException
    {
        long newestSourceTime = 0;
        SourcePosition last = null;
        for (int i = 0; i < records.size(); i++) {
            SourceRecord sourceRecord = records.get(i).record();
            SourcePosition position = position(sourceRecord);
            if (i + 1 == records.size() && hasHeader(sourceRecord, NEW_KEY_HEADER) && (last != null || previousBatchEnd != null)) {
                // the delete of a key change whose create comes in the next batch: both come from one
                // source message and carry its position, so storing it with the delete would make a
                // restart skip the create; the position before it makes a restart resend both
                position = last != null ? last : previousBatchEnd;
            }
            Optional<ChangeEvent> event = mapper.map(sourceRecord, position);
            if (event.isPresent() && i + 1 < records.size() && hasHeader(sourceRecord, NEW_KEY_HEADER) && event.get().operation() == Operation.DELETE) {
                // Debezium splits a key change into a delete of the old key and a create of the new
                // one: taken as one update, the create's unchanged TOAST values come from the old row
                SourceRecord next = records.get(i + 1).record();
                SourcePosition nextPosition = position(next);
                Optional<ChangeEvent> insert = hasHeader(next, OLD_KEY_HEADER) ? mapper.map(next, nextPosition) : Optional.empty();
                if (insert.isPresent() && insert.get().operation() == Operation.INSERT && insert.get().table().equals(event.get().table())) {
                    sink.acceptKeyChange(event.get(), insert.get());
                    newestSourceTime = Math.max(newestSourceTime, insert.get().sourceTimeMillis());
                    last = nextPosition;
                    i++;
                    continue;
                }
            }
            if (event.isPresent()) {
                if (log.isTraceEnabled()) {
                    log.trace("{} - processing {}", name, sourceRecord);
                }
                if (startsTableSnapshot(event.get(), sourceRecord)) {
                    // a snapshot says what the whole table is: rows an interrupted earlier snapshot
                    // copied, and that were deleted since, must not survive it
                    log.info("{} - snapshot of {} starts: emptying its target table in the transaction that loads the first rows", name, event.get().table());
                    sink.flush();
                    sink.accept(ChangeEvent.truncate(event.get().table(), position, event.get().sourceTimeMillis()));
                }
                sink.accept(event.get());
                newestSourceTime = Math.max(newestSourceTime, event.get().sourceTimeMillis());
            }
            else {
                sink.advance(position);
            }
            last = position;
        }
        metrics.eventsIn(records.size());
        metrics.bufferBytes(sink.bufferedBytes());
        flush();
        metrics.bufferBytes(0);
        metrics.lagMillis(newestSourceTime == 0 ? 0 : clock.getAsLong() - newestSourceTime);
        if (last != null) {
            lastPosition = last.offset();
            previousBatchEnd = last;
        }
        // only now, with the batch and its offset committed in the target, may the slot move on
        for (RecordChangeEvent<SourceRecord> record : records) {
            committer.markProcessed(record);
        }
        committer.markBatchFinished();
    }

    private void flush()
            throws InterruptedException
    {
        int attempt = 0;
        while (true) {
            try {
                sink.flush();
                if (attempt > 0) {
                    log.info("{} - flush succeeded after {} retries", name, attempt);
                }
                return;
            }
            catch (SinkException e) {
                if (!e.isTransient() || stopping) {
                    throw e;
                }
                long wait = backoff.delayMillis(attempt++);
                log.warn("{} - flush failed, retrying in {} ms (attempt {}): {}", name, wait, attempt, e.getMessage());
                Thread.sleep(wait);
            }
        }
    }

    /**
     * Whether this is the first snapshot row of its table in this engine run. An engine run snapshots
     * a table at most once (Debezium redoes an interrupted snapshot from the start after a restart),
     * except for incremental snapshots, whose chunks merge into a streaming table and never empty it.
     */
    private boolean startsTableSnapshot(ChangeEvent event, SourceRecord record)
    {
        if (event.operation() != Operation.READ || snapshotTables.contains(event.table())) {
            return false;
        }
        if (record.value() instanceof Struct envelope && envelope.schema().field("source") != null) {
            Struct source = envelope.getStruct("source");
            if (source != null && source.schema().field("snapshot") != null && "incremental".equals(source.getString("snapshot"))) {
                return false;
            }
        }
        snapshotTables.add(event.table());
        return true;
    }

    private static boolean hasHeader(SourceRecord record, String name)
    {
        return record.headers() != null && record.headers().lastWithName(name) != null;
    }

    private SourcePosition position(SourceRecord record)
    {
        Map<String, ?> partition = record.sourcePartition();
        // Debezium hands out equal partition maps for every record: serialize once
        if (lastPartitionJson == null || !partition.equals(lastPartition)) {
            lastPartition = partition;
            lastPartitionJson = OffsetJson.write(partition);
        }
        return new SourcePosition(lastPartitionJson, OffsetJson.write(record.sourceOffset()));
    }

    /** Stops retrying flushes; the engine is shutting down. */
    void stop()
    {
        stopping = true;
    }

    /** The source offset of the last batch applied, for progress logs. */
    String lastPosition()
    {
        return lastPosition;
    }
}
