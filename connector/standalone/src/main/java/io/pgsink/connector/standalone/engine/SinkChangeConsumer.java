package io.pgsink.connector.standalone.engine;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.connector.standalone.load.LoadedChanges;
import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.connector.standalone.source.SourceTableCheck;
import io.pgsink.core.buffer.Sink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
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
 * the first attempt copied and that were deleted in between would otherwise stay in the target
 * ({@link SnapshotStarts}).
 *
 * <p>Changes the initial load copied already ({@link LoadedChanges}: those of a table reloaded after
 * a crash, at a snapshot later than the slot's start) only advance the position.
 *
 * <p>Debezium turns an update that changes the primary key into a delete of the old key (header
 * {@code __debezium.newkey}) directly followed by a create of the new key (header
 * {@code __debezium.oldkey}) at the same source position. The delete is skipped; the mapper
 * ({@link DebeziumRecordMapper.KeyChanges#UPDATE_FROM_OLD_KEY}) turns the create into one update from the
 * old key, which deletes the old row and fills the create's unchanged TOAST values from it, in
 * the same batch or, when the engine split the pair, the next one.
 *
 * <p>A flush that fails with a {@linkplain SinkException#isTransient() transient} error (target
 * restarted, connection lost) is retried with backoff, since the sink keeps its buffers, and the
 * {@link ServiceState} says {@code RETRYING} until a flush succeeds; any other
 * failure, or a transient one inside {@link Sink#accept}, ends the batch with the exception and the
 * engine stops, and the service decides whether to restart it.
 *
 * <p>With {@link FlushBoundary#TRANSACTION}, Debezium's BEGIN and END records
 * ({@link TransactionMarker}) bound each source transaction in the sink
 * ({@link Sink#beginTransaction}), which flushes only between transactions, and the position
 * stored with a flush is that of the last END: a restart resumes after a whole transaction. A batch
 * that ends inside a transaction first flushes the whole transactions before it, when that one
 * begins, and leaves it buffered for the next batch; its records, and those after it, are not
 * marked processed, so the slot does not move past them before they are applied.
 *
 * <p>What no change event says of the captured tables ({@link SourceTableCheck}: renamed, dropped and
 * created again, partitions attached or detached) is asked before a table's first change in an
 * engine run and before each batch; a change that leaves the target unable to follow stops the
 * engine there, with the changes before it applied.
 *
 * <p>With {@code flush.pipelined} the flush at the end of a batch hands it to the sink's applier
 * thread and returns: the engine polls, and this consumer maps and merges, the next batch while it
 * applies. Its records are marked processed only when a later flush has waited for it to commit
 * (the next batch's, at the latest that of the next heartbeat, {@code heartbeat.interval.ms}), so
 * the slot still never runs ahead of the target; it stays one batch behind it instead. The
 * engine's committer keeps no per-batch state (it records each marked record's offset, and
 * {@code markBatchFinished} commits what was recorded), so records of one batch may be marked in
 * a later call; it is not thread-safe, so they are marked on the engine's thread, never by the
 * applier. A stopping engine closes the sink, which lets the batch in flight commit without
 * marking it: the next engine resumes after it from the position stored with it in the target.
 *
 * <p>Called by the engine's single polling thread (one task); not thread-safe otherwise.
 */
public final class SinkChangeConsumer
        implements DebeziumEngine.ChangeConsumer<RecordChangeEvent<SourceRecord>>
{
    private static final Logger log = LoggerFactory.getLogger(SinkChangeConsumer.class);

    private final String name;
    private final Sink sink;
    private final DebeziumRecordMapper mapper;
    private final SinkMetrics metrics;
    private final LongSupplier clock;
    private final Backoff backoff;
    private final ServiceState state;
    private final LoadedChanges loaded;
    private final FlushBoundary boundary;
    /** Each record's position, and whether one without a change may be stored. */
    private final RecordPositions positions;
    private volatile boolean stopping;
    private volatile String lastPosition = "";
    private volatile boolean batchFinished;
    private final SnapshotStarts snapshotStarts = new SnapshotStarts();
    private final SourceTableCheck tables;
    /** Tables a change of which arrived in this engine run, checked by {@link #tables} before the first one. */
    private final Set<TableId> changedTables = new HashSet<>();
    @Nullable
    private TableId lastTable;
    /**
     * Records of batches handed off by a pipelined flush and not yet seen to commit, in engine order: marked processed
     * once they have.
     */
    private final List<RecordChangeEvent<SourceRecord>> unmarked = new ArrayList<>();
    /** Flushes of this consumer that returned: each waited for every batch handed off before it. */
    private long flushes;
    /** What the batch being handled has seen so far; one instance, reset per batch (no allocation per event). */
    private final BatchProgress progress = new BatchProgress();

    SinkChangeConsumer(String name, Sink sink, DebeziumRecordMapper mapper, SinkMetrics metrics, LongSupplier clock,
            Backoff backoff, ServiceState state)
    {
        this(name, sink, mapper, metrics, clock, backoff, state, LoadedChanges.NONE, true, FlushBoundary.BATCH);
    }

    /**
     * With {@code loaded}: the changes the initial load copied already, which are skipped; and
     * whether the engine resumes from a stored position ({@code positionStored}), see {@link #handleBatch}.
     */
    SinkChangeConsumer(String name, Sink sink, DebeziumRecordMapper mapper, SinkMetrics metrics, LongSupplier clock,
            Backoff backoff, ServiceState state, LoadedChanges loaded,
            boolean positionStored, FlushBoundary boundary)
    {
        this(name, sink, mapper, metrics, clock, backoff, state, loaded, positionStored, boundary,
                SourceTableCheck.NONE);
    }

    /**
     * With {@code tables}: what the source's catalog says of the captured tables, which changes do not (see {@link
     * #handleBatch}).
     */
    public SinkChangeConsumer(String name, Sink sink, DebeziumRecordMapper mapper, SinkMetrics metrics,
            LongSupplier clock, Backoff backoff, ServiceState state, LoadedChanges loaded,
            boolean positionStored, FlushBoundary boundary, SourceTableCheck tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.boundary = requireNonNull(boundary, "boundary is null");
        this.loaded = requireNonNull(loaded, "loaded is null");
        this.positions = new RecordPositions(positionStored);
        this.name = requireNonNull(name, "name is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.mapper = requireNonNull(mapper, "mapper is null");
        this.metrics = requireNonNull(metrics, "metrics is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.backoff = requireNonNull(backoff, "backoff is null");
        this.state = requireNonNull(state, "state is null");
    }

    @Override
    public void handleBatch(List<RecordChangeEvent<SourceRecord>> records,
            DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException
    {
        Optional<SinkException> tableFailure = tables.failure();
        if (tableFailure.isPresent()) {
            // the batches before were applied whole: a restart resumes after them
            throw tableFailure.get();
        }
        long flushesBefore = flushes;
        progress.reset();
        int lastEnd = boundary == FlushBoundary.TRANSACTION ? lastTransactionEnd(records) : -1;
        for (int i = 0; i < records.size(); i++) {
            SourceRecord sourceRecord = records.get(i).record();
            Optional<TransactionMarker> marker = boundary == FlushBoundary.TRANSACTION
                    ? TransactionMarker.of(sourceRecord) : Optional.empty();
            if (marker.isPresent()) {
                applyMarker(marker.get(), sourceRecord, i > lastEnd ? i : -1);
            }
            else {
                applyChange(sourceRecord);
            }
        }
        int processed = finishBatch(records.size());
        markProcessed(records, processed, flushesBefore, committer);
        committer.markBatchFinished();
        batchFinished = true;
    }

    /**
     * A transaction's BEGIN or END; {@code openAt} is the BEGIN's index in the batch when its
     * transaction does not end in the batch, else -1.
     */
    private void applyMarker(TransactionMarker marker, SourceRecord sourceRecord, int openAt)
            throws InterruptedException
    {
        if (marker.status() == TransactionMarker.Status.BEGIN) {
            if (openAt >= 0) {
                // this transaction does not end in this batch: the whole ones before it need not wait for it
                flush();
                progress.openSince = openAt;
            }
            sink.beginTransaction(marker.id());
            return;
        }
        progress.last = positions.of(sourceRecord);
        sink.advance(progress.last);
        // an END without its BEGIN: resumed after the BEGIN (Debezium does not repeat it); nothing to close
        if (sink.inTransaction()) {
            sink.endTransaction();
        }
    }

    /** A data change (or a record that only moves the position on) into the sink. */
    private void applyChange(SourceRecord sourceRecord)
            throws InterruptedException
    {
        if (KeyChangeHeaders.isDeleteHalf(sourceRecord) || sourceRecord.value() == null) {
            // the create half that follows a key change's delete carries the old key and is
            // applied as one update (the mapper's UPDATE_FROM_OLD_KEY); the delete, and a tombstone
            // after it, share its position, which is stored only with it, so that a restart
            // between the two replays both
            return;
        }
        SourcePosition position = positions.of(sourceRecord);
        progress.last = position;
        if (loaded.covers(sourceRecord)) {
            // the initial load copied this table at a snapshot that shows this change already
            sink.advance(position);
            return;
        }
        Optional<ChangeEvent> mapped = mapper.map(sourceRecord, position);
        if (mapped.isEmpty()) {
            if (positions.storesPosition(sourceRecord)) {
                sink.advance(position);
            }
            return;
        }
        ChangeEvent event = mapped.get();
        checkFirstChange(event.table());
        if (log.isTraceEnabled()) {
            log.trace("{} - processing {}", name, sourceRecord);
        }
        if (snapshotStarts.startsTableSnapshot(event, sourceRecord)) {
            // a snapshot says what the whole table is: rows an interrupted earlier snapshot
            // copied, and that were deleted since, must not survive it
            log.info("{} - snapshot of {} starts: emptying its target table in the transaction that loads the first "
                    + "rows",
                    name, event.table());
            sink.flush();
            sink.accept(ChangeEvent.truncate(event.table(), position, event.sourceTimeMillis()));
        }
        sink.accept(event);
        progress.snapshot = event.operation() == Operation.READ;
        progress.newestSourceTime = Math.max(progress.newestSourceTime, event.sourceTimeMillis());
    }

    /**
     * Flushes the batch unless a transaction is still open at its end, and reports it; how many
     * records from the batch's start are applied (or handed off to apply).
     */
    private int finishBatch(int size)
            throws InterruptedException
    {
        metrics.eventsIn(size);
        metrics.bufferBytes(sink.bufferedBytes());
        int processed = size;
        if (sink.inTransaction()) {
            // the open transaction stays buffered until its END, in a later batch; what came before it is applied
            processed = Math.max(0, progress.openSince);
        }
        else {
            flush();
        }
        state.set(progress.snapshot ? ServiceState.State.SNAPSHOT : ServiceState.State.STREAMING);
        metrics.bufferBytes(sink.bufferedBytes());
        metrics.lagMillis(progress.newestSourceTime == 0 ? 0 : clock.getAsLong() - progress.newestSourceTime);
        if (progress.last != null) {
            lastPosition = progress.last.offset();
        }
        return processed;
    }

    /** Lets the engine commit the offsets of the records whose changes committed in the target. */
    private void markProcessed(List<RecordChangeEvent<SourceRecord>> records, int processed, long flushesBefore,
            DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer)
            throws InterruptedException
    {
        // only records whose batch and offset committed in the target may let the slot move on
        if (flushes != flushesBefore || !sink.applying()) {
            // a flush of this batch waited for every batch before it
            for (RecordChangeEvent<SourceRecord> record : unmarked) {
                committer.markProcessed(record);
            }
            unmarked.clear();
        }
        if (sink.applying()) {
            // handed off and still applying (flush.pipelined): marked once a later flush saw it commit
            unmarked.addAll(records.subList(0, processed));
        }
        else {
            for (int i = 0; i < processed; i++) {
                committer.markProcessed(records.get(i));
            }
        }
    }

    /** Whether a batch went through: applied in the target, or held for the transaction it belongs to. */
    public boolean finishedABatch()
    {
        return batchFinished;
    }

    /**
     * Before the first change of a table in this engine run: a table renamed from another captured
     * one stops the sink here, with every change before this one applied, so that a restart after
     * the target table was renamed too resumes with exactly this change.
     */
    private void checkFirstChange(TableId table)
            throws InterruptedException
    {
        if (table == lastTable || !changedTables.add(table)) {
            lastTable = table;
            return;
        }
        lastTable = table;
        try {
            tables.beforeFirstChange(table);
        }
        catch (SinkException e) {
            changedTables.remove(table);
            flush();
            throw e;
        }
    }

    /** The index of the last END record of the batch, or -1 when no transaction ends in it. */
    private static int lastTransactionEnd(List<RecordChangeEvent<SourceRecord>> records)
    {
        for (int i = records.size() - 1; i >= 0; i--) {
            Optional<TransactionMarker> marker = TransactionMarker.of(records.get(i).record());
            if (marker.isPresent() && marker.get().status() == TransactionMarker.Status.END) {
                return i;
            }
        }
        return -1;
    }

    private void flush()
            throws InterruptedException
    {
        int attempt = 0;
        while (true) {
            try {
                sink.flush();
                flushes++;
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
                state.retrying(e, attempt);
                log.warn("{} - flush failed, retrying in {} ms (attempt {}): {}", name, wait, attempt, e.getMessage());
                Thread.sleep(wait);
            }
        }
    }

    /** Stops retrying flushes; the engine is shutting down. */
    public void stop()
    {
        stopping = true;
    }

    /** The source offset of the last batch applied, for progress logs. */
    public String lastPosition()
    {
        return lastPosition;
    }

    /** The running state of one {@link #handleBatch} call. Owned by the engine's thread. */
    private static final class BatchProgress
    {
        /** The position of the last record applied or skipped, null before the first. */
        private @Nullable SourcePosition last;
        /** Whether the last change applied was a snapshot read. */
        private boolean snapshot;
        /** The newest source time of an applied change, 0 before the first. */
        private long newestSourceTime;
        /** Where the transaction still open at the end of the batch began, if it began in it, else -1. */
        private int openSince;

        void reset()
        {
            last = null;
            snapshot = false;
            newestSourceTime = 0;
            openSince = -1;
        }
    }
}
