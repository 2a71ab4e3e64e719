package io.pgsink.connector.kafka;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.buffer.Sink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnSelectingSink;
import io.pgsink.merge.MergeApplier;
import io.pgsink.merge.state.MovedRows;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.WriterFencedException;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kafka Connect sink task: reads records into change events ({@link RecordReader}), buffers
 * and merges them in a {@link BufferedSink}, and applies them with a {@link MergeApplier}. Key
 * changes hold the partition of a create until its old row is found ({@link KeyChangeHold}); what
 * the task keeps of its flushes is {@link TaskFlushes}.
 *
 * <p><b>Exactly-once in effect.</b> Every flush writes, in the same target transaction as the
 * data, the position of the last record applied per topic partition ({@link KafkaPositions}) into
 * the offsets table. {@link #open} reads the stored positions of the partitions it is given and
 * rewinds the consumer to the record after each, so that whatever Kafka's committed offsets say,
 * the task resumes exactly after the last applied record. {@link #preCommit} flushes and returns
 * only offsets whose data is committed in the target: Kafka's committed offsets never run ahead
 * of the target (they are a lower bound, for monitoring and for partitions the target has no
 * position of). Each partition is read by one task at a time, so the tasks of a connector share
 * its {@code sink.name}, and a task's flush writes only positions of partitions it owns: when
 * partitions are closed while records of them are buffered (their flush failed, or they were
 * lost to another task), the buffer is dropped and the partitions still owned are rewound to
 * their stored positions. On {@link #open} the task claims each partition's writer generation
 * ({@code MergeApplier.claim}) and every flush checks it: a task that lost a partition while
 * paused (a long GC pause) and flushes late finds the generation taken by the new owner, its
 * flush is rolled back ({@code WriterFencedException}), it drops its buffer and fails retriably
 * until Connect closes the partition. Position bookkeeping is {@link TaskPartitions}.
 *
 * <p><b>Batching.</b> {@link #put} buffers; the sink flushes by its policy ({@code flush.max.events},
 * {@code buffer.max.bytes}, {@code flush.interval.ms}). So that a quiet stream still flushes in
 * time, the task asks Connect ({@code context.timeout}) to hand it the next (possibly empty) batch
 * when the oldest buffered record is due.
 *
 * <p><b>Failures.</b> A target error that retrying may fix ({@link ErrorCode#TRANSIENT}) becomes
 * a {@link RetriableException} after {@code context.timeout} is set to a backoff (500 ms, doubling,
 * up to {@code retry.backoff.max.ms}); Connect hands the same records again, and the task skips
 * those it buffered already (it tracks, per partition, the next offset it expects), then retries
 * the failed flush. Any other error fails the task with a message naming topic, partition,
 * offset, table, key, column and reason, unless {@code errors.tolerance=all}: then a record that
 * cannot be mapped, or a row the target refuses, goes to Connect's errant-record reporter (the
 * dead-letter queue) when Connect has one for the connector ({@link ErrantRecords}), to pgsink's
 * dead-letter table otherwise, and the rest is applied. The policy is {@link RetryPolicy}; the
 * exceptions Connect's worker logs carry sanitized causes, never a row value.
 *
 * <p><b>Reading ahead.</b> The records of a put are read and mapped on a thread of the task's own
 * ({@link ReadAhead}) while the task's thread takes the events in order; a record's failure to
 * read surfaces when its turn comes, as if it were read there.
 *
 * <p>Connect calls a task from one thread.
 */
public final class PgsinkSinkTask
        extends SinkTask
{
    private static final Logger log = LoggerFactory.getLogger(PgsinkSinkTask.class);

    private KafkaSinkConfig config;
    private String name = "pgsink";
    private MergeApplier applier;
    private TaskPartitions partitions;
    private Sink sink;
    private SinkRecordMapper mapper;
    private RecordReader reader;
    private ReadAhead readAhead;
    private RetryPolicy retryPolicy;
    /** Under errors.tolerance=all with Connect's reporter; null otherwise. */
    @Nullable
    private ErrantRecords errantRecords;
    private KeyChangeHold keyChanges;
    private TaskMetrics metrics;
    private TaskFlushes flushes;
    /**
     * A failure for good that surfaced in preCommit (a batch that failed in flight, flush.pipelined): the next put
     * fails the task with it.
     */
    @Nullable
    private SinkException deferredFailure;

    @Override
    public String version()
    {
        return PgsinkSinkConnector.pluginVersion();
    }

    @Override
    public void start(Map<String, String> properties)
    {
        config = KafkaSinkConfig.parse(properties);
        name = config.sinkName();
        ErrantRecordReporter reporter = config.sink().toleratesRejectedRows() ? errantRecordReporter() : null;
        metrics = TaskMetrics.of(context);
        KeyChanges pairs = new KeyChanges(name, new MovedRows(config.sink()), TargetConnector.fromConfig(config.sink()),
                () -> applier.dialect(), table -> applier.appendsHistory(table), config.keyChangeWaitMillis());
        keyChanges = new KeyChangeHold(name, pairs, context, partition -> partitions.get(partition) != null);
        MergeApplier.Builder applierBuilder = MergeApplier.builder(config.sink()).copyListener(metrics::copiedBytes)
                .movedRows(pairs);
        if (reporter != null) {
            ErrantRecords records = new ErrantRecords(name, reporter, partition -> partitions.named(partition));
            applierBuilder.rejectedRowHandler(records::reportRejected);
            errantRecords = records;
        }
        applier = applierBuilder.build();
        partitions = new TaskPartitions(name, applier);
        flushes = new TaskFlushes(name, partitions, keyChanges, metrics, errantRecords, () -> sink);
        sink = newSink();
        mapper = new SinkRecordMapper(config);
        reader = new RecordReader(config, mapper, errantRecords);
        readAhead = new ReadAhead(name, reader);
        retryPolicy = new RetryPolicy(name, config.sink().retryBackoff(), context);
        log.info("{} - task started; rows the target refuses {}", name,
                !config.sink().toleratesRejectedRows() ? "stop the task (errors.tolerance=none)"
                        : reporter != null ? "go to Connect's errant-record reporter"
                        : "go to the dead-letter table " + config.sink().deadLetterTable());
        if (reporter != null && config.sink().flushPolicy().pipelined()) {
            log.warn("{} - flush.pipelined=true is not applied: rows the target refuses go to Connect's errant-record "
                    + "reporter, which must be called from the task's thread, so flushes are synchronous",
                    name);
        }
    }

    @Nullable
    private ErrantRecordReporter errantRecordReporter()
    {
        try {
            return context.errantRecordReporter();
        }
        catch (NoSuchMethodError | NoClassDefFoundError e) {
            // a Connect worker older than 2.6
            return null;
        }
    }

    /**
     * The buffer, behind the column selection ({@code column.*}), which each table's first record is
     * checked against; its entries name the source table a record names, not the routed one.
     */
    private Sink newSink()
    {
        return ColumnSelectingSink.wrap(new BufferedSink(name, flushPolicy(), new TaskApplier(name, applier),
                flushes, System::nanoTime, config.sink().toleratesRejectedRows()),
                config.sink().columnSelection(), table -> mapper.sourceTableOf(table));
    }

    /**
     * {@code flush.*}, but synchronous where rows the target refuses go to Connect's errant-record
     * reporter: a pipelined flush reports them from its applier thread, and Connect's reporter is
     * not made to be called from a thread other than the task's (the worker keeps the futures of
     * reports in lists that its own thread drains without locking, before each offset commit).
     */
    private FlushPolicy flushPolicy()
    {
        FlushPolicy policy = config.sink().flushPolicy();
        return errantRecords != null ? policy.withPipelined(false) : policy;
    }

    @Override
    public void open(Collection<TopicPartition> opened)
    {
        // claims and position reads must not overlap a batch being applied (flush.pipelined)
        settleInFlight("opening " + opened);
        List<TopicPartition> added = List.copyOf(opened);
        partitions.add(added);
        if (!added.isEmpty()) {
            // Connect pauses again at a rebalance what the task paused: a create that waited when its partition was
            // closed is forgotten
            context.resume(added.toArray(new TopicPartition[0]));
        }
        try {
            Map<TopicPartition, Long> rewind = new HashMap<>();
            partitions.load(added, rewind);
            rewind(rewind);
        }
        catch (SinkException e) {
            if (!e.isTransient()) {
                throw new ConnectException(name + " - " + e.getMessage(), e);
            }
            // their records wait (paused) until the positions can be read, see put
            partitions.waitForPositions(added);
            context.pause(added.toArray(new TopicPartition[0]));
            log.warn("{} - cannot read the stored positions of {} yet, their records wait: {}", name, added,
                    e.getMessage());
        }
    }

    private void rewind(Map<TopicPartition, Long> rewind)
    {
        if (!rewind.isEmpty()) {
            context.offset(rewind);
        }
    }

    @Override
    public void put(Collection<SinkRecord> records)
    {
        try {
            Map<TopicPartition, Long> rewind = new HashMap<>();
            if (partitions.waiting()) {
                // claims and position reads must not overlap a batch being applied (flush.pipelined)
                sink.awaitApplied();
            }
            List<TopicPartition> loaded = partitions.loadWaiting(rewind);
            if (!loaded.isEmpty()) {
                rewind(rewind);
                context.resume(loaded.toArray(new TopicPartition[0]));
            }
            keyChanges.release(this::accept);
            if (deferredFailure != null) {
                SinkException failure = deferredFailure;
                deferredFailure = null;
                throw failure;
            }
            if (flushes.takeRetry()) {
                sink.flush();
            }
            List<SinkRecord> taken = records instanceof List<SinkRecord> list ? list : new ArrayList<>(records);
            try (ReadAhead.Batch read = readAhead.read(taken)) {
                for (int i = 0; i < taken.size(); i++) {
                    accept(taken.get(i), read, i);
                }
            }
            keyChanges.afterPut(sink);
            sink.flushIfDue();
            retryPolicy.succeeded();
            metrics.state(TaskMetrics.State.RUNNING);
        }
        catch (WriterFencedException e) {
            // another task claimed a partition since: nothing of the buffer may be committed by this
            // one; Connect closes the partition at the rebalance, until then every flush fails so
            discardBuffer("another task claimed " + (e.fence().isEmpty() ? "the sink" : e.fence()));
            metrics.state(TaskMetrics.State.RETRYING);
            throw retryPolicy.retry(e);
        }
        catch (SinkException e) {
            RuntimeException failure = retryPolicy.failure(e);
            metrics.state(failure instanceof RetriableException ? TaskMetrics.State.RETRYING
                    : TaskMetrics.State.FAILED);
            throw failure;
        }
        catch (RuntimeException e) {
            metrics.state(TaskMetrics.State.FAILED);
            throw e;
        }
        finally {
            metrics.buffered(sink.bufferedBytes(), keyChanges.waitingCount());
        }
        scheduleDueFlush();
    }

    private void accept(SinkRecord received)
    {
        accept(received, null, -1);
    }

    /**
     * Takes one record into the buffer; its event read ahead ({@code read}'s {@code index}), or read
     * here when {@code read} is null.
     */
    private void accept(SinkRecord received, @Nullable ReadAhead.Batch read, int index)
    {
        PartitionState state = partitions.get(new TopicPartition(received.topic(), received.kafkaPartition()));
        if (state == null) {
            throw new ConnectException(name + " - received a record of topic " + received.topic() + " partition "
                    + received.kafkaPartition() + " at offset " + received.kafkaOffset()
                    + ", a partition this task was not given");
        }
        long offset = received.kafkaOffset();
        if (offset < state.next) {
            // handed again after a retriable failure: buffered (or applied) already
            return;
        }
        if (keyChanges.keeps(state.partition, received)) {
            // after a create that waits for its old row
            return;
        }
        SourcePosition position = KafkaPositions.position(state.name, offset);
        Optional<ChangeEvent> event = read != null ? reader.take(read.get(index), received)
                : reader.read(received, position);
        if (event.isPresent() && keyChanges.holds(state.partition, received, event.get(), position)) {
            return;
        }
        Sink.Accepted accepted = Sink.Accepted.BUFFERED;
        if (event.isEmpty()) {
            sink.advance(position);
        }
        else {
            keyChanges.beforeBuffering(received, event.get(), position, sink);
            // when this throws, the sink does not hold the event: the record is taken again
            accepted = sink.offer(event.get());
        }
        state.next = offset + 1;
        if (state.firstUnflushed < 0) {
            state.firstUnflushed = offset;
        }
        if (errantRecords != null) {
            // the record as Connect handed it: the dead-letter queue gets what the topic holds
            errantRecords.keep(position, received);
        }
        metrics.eventsIn(1);
        flushes.taken(event.isPresent() ? event.get().sourceTimeMillis() : 0, System.nanoTime());
        if (accepted == Sink.Accepted.FULL) {
            // a failure keeps the batch in the sink, to be applied again by the next flush
            sink.flush();
        }
    }

    /** Makes Connect hand over the next batch, empty or not, when the oldest buffered record is due. */
    private void scheduleDueFlush()
    {
        long interval = config.sink().flushPolicy().intervalMillis();
        long due = keyChanges.millisToNextLook();
        long flushDue = sink.bufferedEvents() > 0 ? flushes.millisToDue(interval, System.nanoTime()) : -1;
        if (flushDue >= 0) {
            due = due < 0 ? flushDue : Math.min(due, flushDue);
        }
        if (sink.applying()) {
            // a put, empty or not, takes the outcome of the batch in flight (flush.pipelined)
            due = due < 0 ? interval : Math.min(due, interval);
        }
        if (due >= 0) {
            context.timeout(Math.max(due, 1));
        }
    }

    /**
     * Flushes everything buffered, and returns, for the partitions Connect asks about, the offset
     * after the last record whose data is committed in the target.
     */
    @Override
    public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> currentOffsets)
    {
        if (sink != null && deferredFailure == null) {
            try {
                sink.flush();
                // with flush.pipelined: the batch just handed off commits before its offsets are reported
                sink.awaitApplied();
            }
            catch (SinkException e) {
                // not thrown: Connect would only log it; the next put retries a transient failure and fails the task
                // with any other
                if (!e.isTransient()) {
                    deferredFailure = e;
                }
                log.warn("{} - flush before committing offsets failed, {} with the next records: {}", name,
                        e.isTransient() ? "it is retried" : "the task fails", e.getMessage());
            }
        }
        return partitions.committedOffsets(currentOffsets.keySet());
    }

    @Override
    public void close(Collection<TopicPartition> closed)
    {
        // a batch in flight commits (or fails) before the partitions are given up
        settleInFlight("closing " + closed);
        boolean unflushed = partitions.remove(closed);
        keyChanges.closed(closed);
        if (unflushed && sink != null) {
            // their positions must not be written by this task any more: drop the whole buffer and take the rest again
            discardBuffer("partitions " + closed + " were closed with records not flushed");
        }
    }

    /**
     * Waits for a batch handed off by a pipelined flush: it commits, or it fails and stays in the
     * sink (unflushed, so a close drops it with the buffer and a later put applies it again).
     */
    private void settleInFlight(String reason)
    {
        if (sink == null || !sink.applying()) {
            return;
        }
        try {
            sink.awaitApplied();
        }
        catch (SinkException e) {
            log.warn("{} - the batch being applied failed while {}: {}", name, reason, e.getMessage());
        }
    }

    /** Drops everything buffered and rewinds the partitions still owned to the record after their stored positions. */
    private void discardBuffer(String reason)
    {
        long events = sink.bufferedEvents();
        Map<TopicPartition, Long> firstWaiting = keyChanges.discard();
        sink.close();
        sink = newSink();
        if (errantRecords != null) {
            errantRecords.clear();
        }
        flushes.reset();
        deferredFailure = null;
        Map<TopicPartition, Long> rewind = partitions.rewindUnflushed();
        // the records kept after a waiting create are read again
        firstWaiting.forEach(rewind::putIfAbsent);
        rewind(rewind);
        log.info("{} - {}: dropped {} buffered events{}", name, reason, events,
                rewind.isEmpty() ? "" : "; rewinding " + rewind + " to take them again");
    }

    @Override
    public void stop()
    {
        if (readAhead != null) {
            readAhead.close();
        }
        if (sink != null) {
            sink.close();
        }
        if (partitions != null) {
            partitions.clear();
        }
        if (errantRecords != null) {
            errantRecords.clear();
        }
        if (keyChanges != null) {
            keyChanges.close();
        }
        log.info("{} - task stopped", name);
    }
}
