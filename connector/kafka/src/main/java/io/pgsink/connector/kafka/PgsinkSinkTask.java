package io.pgsink.connector.kafka;

import io.pgsink.core.Batch;
import io.pgsink.core.BatchApplier;
import io.pgsink.core.BufferedSink;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.FlushListener;
import io.pgsink.core.RejectedRow;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.merge.MergeApplier;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The Kafka Connect sink task: maps records to change events ({@link SinkRecordMapper}), buffers
 * and merges them in a {@link BufferedSink}, and applies them with a {@link MergeApplier}.
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
 * their stored positions.
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
 * dead-letter queue) when Connect has one for the connector, to pgsink's dead-letter table
 * otherwise, and the rest is applied.
 *
 * <p>Connect calls a task from one thread.
 */
public final class PgsinkSinkTask
        extends SinkTask
{
    private static final Logger log = LoggerFactory.getLogger(PgsinkSinkTask.class);

    private final Map<TopicPartition, PartitionState> partitions = new HashMap<>();
    private final Map<String, PartitionState> partitionsByName = new HashMap<>();
    private final Set<TopicPartition> unpositioned = new LinkedHashSet<>();
    /** Under errors.tolerance=all with a reporter: the records behind buffered events, for reporting rows the target refuses. */
    private final Map<SourcePosition, SinkRecord> bufferedRecords = new HashMap<>();

    private KafkaSinkConfig config;
    private String name = "pgsink";
    private MergeApplier applier;
    private BufferedSink sink;
    private SinkRecordMapper mapper;
    @Nullable
    private ErrantRecordReporter reporter;
    private int failedAttempts;
    private boolean retryFlush;
    private long flushes;
    private long firstBufferedNanos = -1;

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
        reporter = config.sink().toleratesRejectedRows() ? errantRecordReporter() : null;
        MergeApplier.Builder applierBuilder = MergeApplier.builder(config.sink());
        if (reporter != null) {
            applierBuilder.rejectedRowHandler(this::reportRejected);
        }
        applier = applierBuilder.build();
        sink = newSink();
        mapper = new SinkRecordMapper(config);
        log.info("{} - task started; rows the target refuses {}", name, !config.sink().toleratesRejectedRows() ? "stop the task (errors.tolerance=none)"
                : reporter != null ? "go to Connect's errant-record reporter" : "go to the dead-letter table " + config.sink().deadLetterTable());
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

    private BufferedSink newSink()
    {
        return new BufferedSink(name, config.sink().flushPolicy(), new TaskApplier(), new Listener(), System::nanoTime, config.sink().toleratesRejectedRows());
    }

    @Override
    public void open(Collection<TopicPartition> opened)
    {
        List<TopicPartition> added = new ArrayList<>(opened.size());
        for (TopicPartition partition : opened) {
            PartitionState state = new PartitionState(partition);
            partitions.put(partition, state);
            partitionsByName.put(state.name, state);
            added.add(partition);
        }
        try {
            loadPositions(added);
        }
        catch (SinkException e) {
            if (!e.isTransient()) {
                throw new ConnectException(name + " - " + e.getMessage(), e);
            }
            // their records wait (paused) until the positions can be read, see put
            unpositioned.addAll(added);
            context.pause(added.toArray(new TopicPartition[0]));
            log.warn("{} - cannot read the stored positions of {} yet, their records wait: {}", name, added, e.getMessage());
        }
    }

    /** Reads the stored positions of {@code opened} and rewinds the consumer to the record after each. */
    private void loadPositions(Collection<TopicPartition> opened)
    {
        Map<String, SourcePosition> stored = applier.committedPositions();
        Map<TopicPartition, Long> rewind = new HashMap<>();
        List<String> described = new ArrayList<>();
        for (TopicPartition partition : opened) {
            PartitionState state = partitions.get(partition);
            if (state == null) {
                continue;
            }
            SourcePosition position = stored.get(state.name);
            if (position == null) {
                described.add(state.name + " (no stored position: from Kafka's committed offset)");
                continue;
            }
            long offset;
            try {
                offset = KafkaPositions.parseOffset(position);
            }
            catch (NumberFormatException e) {
                throw new SinkException(ErrorCode.CONFIG, "The offsets table holds position '" + position.offset() + "' for " + state.name + " of sink '" + name
                        + "', which is not a Kafka offset: is sink.name " + name + " also used by another sink?");
            }
            state.committed = offset;
            state.next = offset + 1;
            rewind.put(partition, offset + 1);
            described.add(state.name + " at offset " + (offset + 1));
        }
        if (!rewind.isEmpty()) {
            context.offset(rewind);
        }
        log.info("{} - opened {}", name, String.join(", ", described));
    }

    @Override
    public void put(Collection<SinkRecord> records)
    {
        try {
            if (!unpositioned.isEmpty()) {
                loadPositions(unpositioned);
                context.resume(unpositioned.toArray(new TopicPartition[0]));
                unpositioned.clear();
            }
            if (retryFlush) {
                retryFlush = false;
                sink.flush();
            }
            for (SinkRecord record : records) {
                accept(record);
            }
            sink.flushIfDue();
            failedAttempts = 0;
        }
        catch (SinkException e) {
            throw failure(e);
        }
        scheduleDueFlush();
    }

    private void accept(SinkRecord record)
    {
        PartitionState state = partitions.get(new TopicPartition(record.topic(), record.kafkaPartition()));
        if (state == null) {
            throw new ConnectException(name + " - received a record of topic " + record.topic() + " partition " + record.kafkaPartition() + " at offset " + record.kafkaOffset()
                    + ", a partition this task was not given");
        }
        long offset = record.kafkaOffset();
        if (offset < state.next) {
            // handed again after a retriable failure: buffered (or applied) already
            return;
        }
        SourcePosition position = KafkaPositions.position(state.name, offset);
        Optional<ChangeEvent> event = map(record, position);

        long previousNext = state.next;
        long previousFirst = state.firstUnflushed;
        long flushesBefore = flushes;
        long eventsBefore = sink.bufferedEvents();
        state.next = offset + 1;
        if (state.firstUnflushed < 0) {
            state.firstUnflushed = offset;
        }
        if (reporter != null) {
            bufferedRecords.put(position, record);
        }
        try {
            if (event.isPresent()) {
                sink.accept(event.get());
            }
            else {
                sink.advance(position);
            }
        }
        catch (RuntimeException e) {
            // the sink may have buffered the event before a flush failed; if it did not, the record is to be taken again
            boolean buffered = flushes != flushesBefore ? sink.bufferedEvents() > 0 : sink.bufferedEvents() > eventsBefore;
            if (!buffered) {
                state.next = previousNext;
                state.firstUnflushed = previousFirst;
                bufferedRecords.remove(position);
            }
            throw e;
        }
        if (firstBufferedNanos < 0 && sink.bufferedEvents() > 0) {
            firstBufferedNanos = System.nanoTime();
        }
    }

    /** The record's event; empty for records that change nothing, and for bad records skipped under errors.tolerance=all. */
    private Optional<ChangeEvent> map(SinkRecord record, SourcePosition position)
    {
        SinkException failure;
        try {
            return mapper.map(record, position);
        }
        catch (SinkException e) {
            if (e.isTransient() || e.errorCode() == ErrorCode.CONFIG) {
                throw e;
            }
            failure = e;
        }
        catch (DataException | ClassCastException | IllegalArgumentException e) {
            failure = new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot read the record of topic " + record.topic() + " at " + position + ": " + e.getMessage(), e);
        }
        if (!config.sink().toleratesRejectedRows()) {
            throw failure;
        }
        if (reporter != null) {
            report(List.of(record), List.of(failure));
        }
        else {
            log.warn("{} - skipped a record it cannot apply (errors.tolerance=all, and Connect has no errant-record reporter for this connector): {}", name, failure.getMessage());
        }
        return Optional.empty();
    }

    /** Sends the records of rows the target refused to the errant-record reporter; called in the flush transaction, before it commits. */
    private void reportRejected(List<RejectedRow> rows)
    {
        List<SinkRecord> records = new ArrayList<>(rows.size());
        List<Throwable> errors = new ArrayList<>(rows.size());
        for (RejectedRow row : rows) {
            SourcePosition position = row.change().position();
            SinkRecord record = bufferedRecords.get(position);
            if (record == null) {
                // not kept (cannot happen for rows of this task's records): report where it was
                PartitionState state = partitionsByName.get(position.partition());
                TopicPartition partition = state != null ? state.partition : KafkaPositions.parsePartition(position.partition()).orElse(new TopicPartition(position.partition(), 0));
                record = new SinkRecord(partition.topic(), partition.partition(), null, null, null, null, Long.parseLong(position.offset()));
            }
            records.add(record);
            errors.add(new SinkException(ErrorCode.DATA, "Cannot write a row of " + row.describe()));
        }
        report(records, errors);
    }

    /** Reports records and waits until Connect has them, so that they are in the dead-letter queue before their positions are stored. */
    private void report(List<SinkRecord> records, List<? extends Throwable> errors)
    {
        ErrantRecordReporter target = reporter;
        if (target == null) {
            throw new IllegalStateException("no errant-record reporter");
        }
        List<Future<Void>> sent = new ArrayList<>(records.size());
        for (int i = 0; i < records.size(); i++) {
            sent.add(target.report(records.get(i), errors.get(i)));
        }
        for (int i = 0; i < sent.size(); i++) {
            try {
                sent.get(i).get();
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException(name + " - interrupted while reporting the record of topic " + records.get(i).topic() + " partition " + records.get(i).kafkaPartition()
                        + " at offset " + records.get(i).kafkaOffset(), e);
            }
            catch (ExecutionException e) {
                throw new ConnectException(name + " - cannot report the record of topic " + records.get(i).topic() + " partition " + records.get(i).kafkaPartition()
                        + " at offset " + records.get(i).kafkaOffset() + " to the errant-record reporter: " + e.getCause().getMessage(), e.getCause());
            }
        }
    }

    private RuntimeException failure(SinkException e)
    {
        if (e.isTransient()) {
            long delay = config.sink().retryBackoff().delayMillis(failedAttempts);
            failedAttempts++;
            context.timeout(delay);
            return new RetriableException(name + " - " + e.getMessage() + " (attempt " + failedAttempts + ", retrying in " + delay + " ms)", e);
        }
        return new ConnectException(name + " - " + e.getMessage(), e);
    }

    /** Makes Connect hand over the next batch, empty or not, when the oldest buffered record is due. */
    private void scheduleDueFlush()
    {
        if (sink.bufferedEvents() == 0 || firstBufferedNanos < 0) {
            return;
        }
        long waitedMillis = (System.nanoTime() - firstBufferedNanos) / 1_000_000;
        context.timeout(Math.max(config.sink().flushPolicy().intervalMillis() - waitedMillis, 1));
    }

    /**
     * Flushes everything buffered, and returns, for the partitions Connect asks about, the offset
     * after the last record whose data is committed in the target.
     */
    @Override
    public Map<TopicPartition, OffsetAndMetadata> preCommit(Map<TopicPartition, OffsetAndMetadata> currentOffsets)
    {
        if (sink != null) {
            try {
                sink.flush();
            }
            catch (SinkException e) {
                // not thrown: Connect would only log it; the next put retries the flush and fails the task if it must
                log.warn("{} - flush before committing offsets failed, it is retried with the next records: {}", name, e.getMessage());
            }
        }
        Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
        for (TopicPartition partition : currentOffsets.keySet()) {
            PartitionState state = partitions.get(partition);
            if (state != null && state.committed >= 0) {
                committed.put(partition, new OffsetAndMetadata(state.committed + 1));
            }
        }
        return committed;
    }

    @Override
    public void close(Collection<TopicPartition> closed)
    {
        boolean unflushed = false;
        for (TopicPartition partition : closed) {
            PartitionState state = partitions.remove(partition);
            if (state != null) {
                partitionsByName.remove(state.name);
                unflushed |= state.firstUnflushed >= 0;
            }
            unpositioned.remove(partition);
        }
        if (unflushed && sink != null) {
            // their positions must not be written by this task any more: drop the whole buffer and take the rest again
            discardBuffer("partitions " + closed + " were closed with records not flushed");
        }
    }

    /** Drops everything buffered and rewinds the partitions still owned to the record after their stored positions. */
    private void discardBuffer(String reason)
    {
        long events = sink.bufferedEvents();
        sink.close();
        sink = newSink();
        bufferedRecords.clear();
        retryFlush = false;
        firstBufferedNanos = -1;
        Map<TopicPartition, Long> rewind = new HashMap<>();
        for (PartitionState state : partitions.values()) {
            if (state.firstUnflushed >= 0) {
                long offset = state.committed >= 0 ? state.committed + 1 : state.firstUnflushed;
                rewind.put(state.partition, offset);
                state.next = offset;
                state.firstUnflushed = -1;
            }
        }
        if (!rewind.isEmpty()) {
            context.offset(rewind);
        }
        log.info("{} - {}: dropped {} buffered events{}", name, reason, events, rewind.isEmpty() ? "" : "; rewinding " + rewind + " to take them again");
    }

    @Override
    public void stop()
    {
        if (sink != null) {
            sink.close();
        }
        partitions.clear();
        partitionsByName.clear();
        bufferedRecords.clear();
        log.info("{} - task stopped", name);
    }

    /** Keeps the positions per partition as flushes commit them. */
    private final class Listener
            implements FlushListener
    {
        @Override
        public void flushed(Batch batch, long elapsedNanos)
        {
            flushes++;
            retryFlush = false;
            for (SourcePosition position : batch.positions().values()) {
                PartitionState state = partitionsByName.get(position.partition());
                if (state != null) {
                    state.committed = KafkaPositions.parseOffset(position);
                }
            }
            for (PartitionState state : partitions.values()) {
                state.firstUnflushed = -1;
            }
            bufferedRecords.clear();
            firstBufferedNanos = -1;
            if (log.isDebugEnabled()) {
                log.debug("{} - flushed {} events ({} tables) in {} ms", name, batch.events(), batch.tables().size(), elapsedNanos / 1_000_000);
            }
        }

        @Override
        public void flushFailed(Batch batch, long elapsedNanos, RuntimeException failure)
        {
            retryFlush = true;
        }
    }

    /** What the task knows of one partition it owns. */
    private static final class PartitionState
    {
        final TopicPartition partition;
        final String name;
        /** Offset of the last record whose data is committed in the target; -1 while unknown. */
        long committed = -1;
        /** Records below this offset are buffered or applied already; -1 takes every record. */
        long next = -1;
        /** Offset of the first record taken since the last flush; -1 when none is. */
        long firstUnflushed = -1;

        PartitionState(TopicPartition partition)
        {
            this.partition = partition;
            this.name = KafkaPositions.partition(partition);
        }
    }

    /**
     * The applier as the sink sees it.
     *
     * <p>Stored positions are read per partition when Connect opens partitions, so the sink must
     * not read them when it is created (the target may not answer yet when the task starts).
     *
     * <p>A batch whose attempt failed with a lost connection may have committed all the same: the
     * connection can drop after the server committed and before its answer arrived. Applying it
     * again is harmless for tables with a key (every touched key is deleted first) but would
     * duplicate the rows of append-only tables, so after such a failure the batch is applied again
     * only if the target does not hold its positions yet.
     */
    private final class TaskApplier
            implements BatchApplier
    {
        private boolean outcomeUnknown;

        @Override
        public void apply(Batch batch)
        {
            if (outcomeUnknown && committed(batch)) {
                outcomeUnknown = false;
                log.info("{} - the last attempt to apply {} events committed before its connection was lost; not applying them again", name, batch.events());
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
                if (storedPosition == null || KafkaPositions.parseOffset(storedPosition) < KafkaPositions.parseOffset(position)) {
                    return false;
                }
            }
            return true;
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
}
