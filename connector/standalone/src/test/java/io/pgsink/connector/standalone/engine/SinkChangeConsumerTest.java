package io.pgsink.connector.standalone.engine;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.connector.standalone.monitoring.SinkMetrics;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.buffer.Sink;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The order that makes the standalone service exactly-once: apply and commit, then hand records back to the engine. */
class SinkChangeConsumerTest
{
    private static final Schema KEY = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build();
    private static final Schema ROW = SchemaBuilder.struct().optional().field("id", Schema.INT64_SCHEMA).field("v", Schema.OPTIONAL_STRING_SCHEMA).build();
    private static final Schema SOURCE = SchemaBuilder.struct().field("schema", Schema.STRING_SCHEMA).field("table", Schema.STRING_SCHEMA).field("ts_ms", Schema.INT64_SCHEMA)
            .field("snapshot", Schema.OPTIONAL_STRING_SCHEMA).build();
    private static final Schema ENVELOPE = SchemaBuilder.struct().field("before", ROW).field("after", ROW).field("source", SOURCE).field("op", Schema.STRING_SCHEMA).build();

    /** Everything that happens, in order: applied batches and engine calls. */
    private final List<String> journal = Collections.synchronizedList(new ArrayList<>());

    private class RecordingApplier
            implements BatchApplier
    {
        private int failuresLeft;
        /** Under flush.pipelined, each apply waits for a permit: the test decides when a batch applies. */
        private final Semaphore permits = new Semaphore(Integer.MAX_VALUE);

        @Override
        public void apply(Batch batch)
        {
            permits.acquireUninterruptibly();
            if (failuresLeft > 0) {
                failuresLeft--;
                journal.add("apply failed");
                throw new SinkException(ErrorCode.TRANSIENT, "target restarting");
            }
            List<String> truncated = batch.tables().stream().filter(TableBatch::truncate).map(table -> table.table().table()).toList();
            journal.add("apply " + batch.events() + " events, positions " + batch.positions().values().stream().map(SourcePosition::offset).toList()
                    + (truncated.isEmpty() ? "" : ", truncating " + truncated));
        }

        @Override
        public Map<String, SourcePosition> committedPositions()
        {
            return Map.of();
        }

        @Override
        public void close() {}
    }

    private final class RecordingCommitter
            implements DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>>
    {
        @Override
        public void markProcessed(RecordChangeEvent<SourceRecord> record)
        {
            journal.add("processed " + record.record().sourceOffset().get("lsn"));
        }

        @Override
        public void markBatchFinished()
        {
            journal.add("batch finished");
        }

        @Override
        public void markProcessed(RecordChangeEvent<SourceRecord> record, DebeziumEngine.Offsets sourceOffsets)
        {
            throw new UnsupportedOperationException();
        }

        @Override
        public DebeziumEngine.Offsets buildOffsets()
        {
            throw new UnsupportedOperationException();
        }
    }

    private static RecordChangeEvent<SourceRecord> change(long lsn, long id)
    {
        return record(lsn, "t", id, "c", null);
    }

    private static RecordChangeEvent<SourceRecord> record(long lsn, String table, long id, String op, String snapshot)
    {
        Struct after = new Struct(ROW).put("id", id).put("v", "value " + id);
        Struct envelope = new Struct(ENVELOPE).put("after", after).put("op", op)
                .put("source", new Struct(SOURCE).put("schema", "public").put("table", table).put("ts_ms", 1000L).put("snapshot", snapshot));
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), Map.of("lsn", lsn), "db1.public." + table, KEY, new Struct(KEY).put("id", id), ENVELOPE, envelope);
        return () -> record;
    }

    private static RecordChangeEvent<SourceRecord> heartbeat(long lsn)
    {
        return heartbeat(Map.of("lsn", lsn));
    }

    private static RecordChangeEvent<SourceRecord> heartbeat(Map<String, ?> offset)
    {
        Schema schema = SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat").field("ts_ms", Schema.INT64_SCHEMA).build();
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), offset, "__debezium-heartbeat.db1", null, null, schema, new Struct(schema).put("ts_ms", 5L));
        return () -> record;
    }

    private SinkChangeConsumer consumer(RecordingApplier applier, long maxEvents)
    {
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(maxEvents, 1 << 30, 60_000), applier);
        return new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 2000L, new Backoff(1, 1), new ServiceState("test", java.time.Instant::now));
    }

    /**
     * Started without a stored position (after the initial load), Debezium's first heartbeats carry
     * the server's WAL position at task start, without the processed LSN it resumes from: storing
     * it would make a restart skip the changes between the slot's position and that one.
     */
    @Test
    void storesNoHeartbeatPositionBeforeOneDebeziumResumesFromExactly()
            throws Exception
    {
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(10_000, 1 << 30, 60_000), new RecordingApplier());
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 2000L, new Backoff(1, 1),
                new ServiceState("test", java.time.Instant::now), io.pgsink.connector.standalone.load.LoadedChanges.NONE, false, FlushBoundary.BATCH);
        consumer.handleBatch(List.of(heartbeat(12)), new RecordingCommitter());
        assertThat(journal).filteredOn(line -> line.startsWith("apply")).isEmpty();
        consumer.handleBatch(List.of(heartbeat(Map.of("lsn", 20L, "lsn_proc", 20L)), heartbeat(30)), new RecordingCommitter());
        assertThat(journal).filteredOn(line -> line.startsWith("apply")).singleElement().asString().contains("\"lsn\":30");
    }

    private static RecordChangeEvent<SourceRecord> marker(long lsn, String status, String id)
    {
        Schema schema = SchemaBuilder.struct().name(TransactionMarker.VALUE_SCHEMA).field("status", Schema.STRING_SCHEMA).field("id", Schema.STRING_SCHEMA).build();
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), Map.of("lsn", lsn), "db1.transaction", null, null, schema, new Struct(schema).put("status", status).put("id", id));
        return () -> record;
    }

    /**
     * With transaction boundaries, a transaction larger than flush.max.events is applied whole, a batch
     * that ends inside one applies the whole transactions before it and hands back only their records,
     * and the stored position is an END's.
     */
    @Test
    void transactionBoundariesApplyWholeTransactionsAndHandBackOnlyThem()
            throws Exception
    {
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(2, 1 << 30, 60_000), new RecordingApplier());
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 2000L, new Backoff(1, 1),
                new ServiceState("test", java.time.Instant::now), io.pgsink.connector.standalone.load.LoadedChanges.NONE, true, FlushBoundary.TRANSACTION);
        consumer.handleBatch(List.of(marker(9, "BEGIN", "1:20"), change(10, 1), change(11, 2), change(12, 3), marker(20, "END", "1:20"),
                marker(29, "BEGIN", "2:40"), change(30, 4)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "apply 4 events, positions [{\"lsn\":20}]",
                "processed 9", "processed 10", "processed 11", "processed 12", "processed 20",
                "batch finished");
        journal.clear();
        consumer.handleBatch(List.of(change(31, 5)), new RecordingCommitter());
        assertThat(journal).as("inside transaction 2 all along: nothing applied, nothing handed back").containsExactly("batch finished");
        journal.clear();
        // the transaction is full (flush.max.events 2) at its END: applied there; the heartbeat after it at the batch's end
        consumer.handleBatch(List.of(change(32, 6), marker(40, "END", "2:40"), heartbeat(41)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "apply 4 events, positions [{\"lsn\":40}]",
                "apply 1 events, positions [{\"lsn\":41}]",
                "processed 32", "processed 40", "processed 41",
                "batch finished");
    }

    @Test
    void appliesTheBatchBeforeHandingItBack()
            throws Exception
    {
        SinkChangeConsumer consumer = consumer(new RecordingApplier(), 10_000);
        consumer.handleBatch(List.of(change(10, 1), change(11, 2), heartbeat(12)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "apply 3 events, positions [{\"lsn\":12}]",
                "processed 10", "processed 11", "processed 12",
                "batch finished");
        assertThat(consumer.lastPosition()).isEqualTo("{\"lsn\":12}");
    }

    @Test
    void aFullBufferFlushesInsideTheBatchAndTheRestAtItsEnd()
            throws Exception
    {
        consumer(new RecordingApplier(), 2).handleBatch(List.of(change(10, 1), change(11, 2), change(12, 3)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "apply 2 events, positions [{\"lsn\":11}]",
                "apply 1 events, positions [{\"lsn\":12}]",
                "processed 10", "processed 11", "processed 12",
                "batch finished");
    }

    @Test
    void retriesATransientFlushFailureBeforeHandingAnythingBack()
            throws Exception
    {
        RecordingApplier applier = new RecordingApplier();
        applier.failuresLeft = 2;
        consumer(applier, 10_000).handleBatch(List.of(change(10, 1)), new RecordingCommitter());
        assertThat(journal).containsExactly("apply failed", "apply failed", "apply 1 events, positions [{\"lsn\":10}]", "processed 10", "batch finished");
    }

    @Test
    void aSnapshotEmptiesEachTableBeforeItsFirstRow()
            throws Exception
    {
        SinkChangeConsumer consumer = consumer(new RecordingApplier(), 10_000);
        consumer.handleBatch(List.of(
                record(1, "a", 1, "r", "first"),
                record(2, "a", 2, "r", "true"),
                record(3, "b", 1, "r", "last_in_data_collection"),
                record(4, "a", 3, "c", null)), new RecordingCommitter());
        // the next batch continues the snapshot: no second truncate of a table already started
        consumer.handleBatch(List.of(record(5, "b", 2, "r", "last"), record(6, "c", 1, "r", "incremental")), new RecordingCommitter());
        // what is buffered is flushed before a truncate is buffered, so that a table's truncate
        // travels with the rows that create or fill the table, not behind unrelated ones
        assertThat(journal).containsExactly(
                "apply 3 events, positions [{\"lsn\":2}], truncating [a]",
                "apply 3 events, positions [{\"lsn\":4}], truncating [b]",
                "processed 1", "processed 2", "processed 3", "processed 4", "batch finished",
                "apply 2 events, positions [{\"lsn\":6}]",
                "processed 5", "processed 6", "batch finished");
    }

    @Test
    void takesTheCreateOfAKeyChangeAsOneUpdateFromTheOldKeyInWhicheverBatchItComes()
            throws Exception
    {
        List<String> calls = new ArrayList<>();
        Sink sink = new Sink()
        {
            @Override
            public Accepted offer(ChangeEvent event)
            {
                calls.add("accept " + event.operation() + " " + (event.before() != null && event.after() != null ? event.before()[0] + " -> " : "") + id(event) + " at " + event.position().offset());
                return Accepted.BUFFERED;
            }

            @Override
            public void acceptKeyChange(ChangeEvent delete, ChangeEvent insert)
            {
                throw new AssertionError("the mapper pairs key changes");
            }

            @Override
            public void advance(SourcePosition position)
            {
                calls.add("advance " + position.offset());
            }

            @Override
            public boolean flushIfDue()
            {
                return false;
            }

            @Override
            public void flush() {}

            @Override
            public Map<String, SourcePosition> committedPositions()
            {
                return Map.of();
            }

            @Override
            public long bufferedEvents()
            {
                return 0;
            }

            @Override
            public long bufferedBytes()
            {
                return 0;
            }

            @Override
            public void close() {}
        };
        DebeziumRecordMapper mapper = new DebeziumRecordMapper(new UnavailablePlaceholder(UnavailablePlaceholder.DEFAULT), DebeziumRecordMapper.KeyChanges.UPDATE_FROM_OLD_KEY);
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, mapper, new SinkMetrics("test"), () -> 0L, new Backoff(1, 1), new ServiceState("test", java.time.Instant::now));
        consumer.handleBatch(List.of(
                keyChange(10, 1, "d", "__debezium.newkey", 2),
                keyChange(10, 2, "c", "__debezium.oldkey", 1),
                change(12, 3),
                // a pair the engine split: neither the delete nor its tombstone moves the position
                // (shared with the create) ahead of the create
                keyChange(13, 3, "d", "__debezium.newkey", 4),
                tombstone(13, 3)), new RecordingCommitter());
        consumer.handleBatch(List.of(keyChange(13, 4, "c", "__debezium.oldkey", 3)), new RecordingCommitter());
        assertThat(calls).containsExactly("accept UPDATE 1 -> 2 at {\"lsn\":10}", "accept INSERT 3 at {\"lsn\":12}", "accept UPDATE 3 -> 4 at {\"lsn\":13}");
        assertThat(journal).containsExactly("processed 10", "processed 10", "processed 12", "processed 13", "processed 13", "batch finished", "processed 13", "batch finished");
    }

    private static Object id(ChangeEvent event)
    {
        return (event.after() != null ? event.after() : event.before())[0];
    }

    private static RecordChangeEvent<SourceRecord> tombstone(long lsn, long id)
    {
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), Map.of("lsn", lsn), "db1.public.t", null, KEY, new Struct(KEY).put("id", id), null, null);
        return () -> record;
    }

    private static RecordChangeEvent<SourceRecord> keyChange(long lsn, long id, String op, String header, long otherKey)
    {
        Struct row = new Struct(ROW).put("id", id).put("v", "value " + id);
        Struct envelope = new Struct(ENVELOPE).put(op.equals("d") ? "before" : "after", row).put("op", op)
                .put("source", new Struct(SOURCE).put("schema", "public").put("table", "t").put("ts_ms", 1000L));
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), Map.of("lsn", lsn), "db1.public.t", null, KEY, new Struct(KEY).put("id", id), ENVELOPE, envelope, null,
                new org.apache.kafka.connect.header.ConnectHeaders().add(header, new Struct(KEY).put("id", otherKey), KEY));
        return () -> record;
    }

    @Test
    void handsNothingBackWhenTheFlushFails()
    {
        BatchApplier failing = new RecordingApplier()
        {
            @Override
            public void apply(Batch batch)
            {
                throw new SinkException(ErrorCode.DATA, "row rejected");
            }
        };
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(10_000, 1 << 30, 60_000), failing);
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 0L, new Backoff(1, 1), new ServiceState("test", java.time.Instant::now));
        assertThatThrownBy(() -> consumer.handleBatch(List.of(change(10, 1)), new RecordingCommitter())).hasMessage("row rejected");
        assertThat(journal).isEmpty();
    }

    @Test
    void aRetriedFlushIsRetryingInHealthAndMetricsUntilItSucceeds()
            throws Exception
    {
        ServiceState state = new ServiceState("test", () -> java.time.Instant.parse("2026-01-01T00:00:00Z"));
        SinkMetrics metrics = new SinkMetrics("test");
        metrics.stateGauges(state);
        List<String> observed = new ArrayList<>();
        BatchApplier flaky = new RecordingApplier()
        {
            private int attempts;

            @Override
            public void apply(Batch batch)
            {
                observed.add(state.health().up() + " " + state.health().json());
                observed.add(metrics.scrape().lines().filter(line -> line.startsWith("pgsink_state{") && line.endsWith(" 1.0")).findFirst().orElse("none"));
                if (attempts++ < 2) {
                    throw new SinkException(ErrorCode.TRANSIENT, "target restarting");
                }
            }
        };
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(10_000, 1 << 30, 60_000), flaky);
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), metrics, () -> 0L, new Backoff(1, 1), state);
        consumer.handleBatch(List.of(change(10, 1)), new RecordingCommitter());
        assertThat(observed).containsExactly(
                "true {\"status\":\"UP\",\"state\":\"STARTING\",\"sink\":\"test\",\"since\":\"2026-01-01T00:00:00Z\"}",
                "pgsink_state{sink=\"test\",state=\"STARTING\"} 1.0",
                "false {\"status\":\"DOWN\",\"state\":\"RETRYING\",\"sink\":\"test\",\"since\":\"2026-01-01T00:00:00Z\",\"error_class\":\"TRANSIENT\",\"error\":\"target restarting\",\"attempt\":1}",
                "pgsink_state{sink=\"test\",state=\"RETRYING\"} 1.0",
                "false {\"status\":\"DOWN\",\"state\":\"RETRYING\",\"sink\":\"test\",\"since\":\"2026-01-01T00:00:00Z\",\"error_class\":\"TRANSIENT\",\"error\":\"target restarting\",\"attempt\":2}",
                "pgsink_state{sink=\"test\",state=\"RETRYING\"} 1.0");
        assertThat(state.state()).isEqualTo(ServiceState.State.STREAMING);
        assertThat(state.health().up()).isTrue();
        assertThat(metrics.scrape()).contains("pgsink_state{sink=\"test\",state=\"STREAMING\"} 1.0").contains("pgsink_state{sink=\"test\",state=\"RETRYING\"} 0.0");
    }

    private SinkChangeConsumer pipelinedConsumer(RecordingApplier applier, BufferedSink[] sink)
    {
        applier.permits.drainPermits();
        sink[0] = new BufferedSink("test", new FlushPolicy(10_000, 1 << 30, 60_000, true), applier);
        return new SinkChangeConsumer("test", sink[0], new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 2000L, new Backoff(1, 1), new ServiceState("test", java.time.Instant::now));
    }

    /**
     * flush.pipelined: the batch applies while the engine hands over the next one, and its records
     * are handed back only once a later flush saw it commit; a stopping engine closes the sink,
     * which lets the batch in flight commit without handing it back.
     */
    @Test
    void pipelinedHandsABatchBackOnlyOnceALaterFlushSawItCommit()
            throws Exception
    {
        RecordingApplier applier = new RecordingApplier();
        BufferedSink[] sink = new BufferedSink[1];
        SinkChangeConsumer consumer = pipelinedConsumer(applier, sink);
        consumer.handleBatch(List.of(change(10, 1), change(11, 2)), new RecordingCommitter());
        assertThat(journal).as("handed off, not applied: nothing handed back").containsExactly("batch finished");

        applier.permits.release(1);
        consumer.handleBatch(List.of(change(12, 3)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "batch finished",
                "apply 2 events, positions [{\"lsn\":11}]",
                "processed 10", "processed 11",
                "batch finished");

        applier.permits.release(1);
        sink[0].close();
        assertThat(journal).as("the batch in flight commits at close, and is not handed back").containsExactly(
                "batch finished",
                "apply 2 events, positions [{\"lsn\":11}]",
                "processed 10", "processed 11",
                "batch finished",
                "apply 1 events, positions [{\"lsn\":12}]");
    }

    @Test
    void pipelinedRetriesABatchThatFailedInFlightBeforeHandingItBack()
            throws Exception
    {
        RecordingApplier applier = new RecordingApplier();
        BufferedSink[] sink = new BufferedSink[1];
        SinkChangeConsumer consumer = pipelinedConsumer(applier, sink);
        applier.failuresLeft = 1;
        consumer.handleBatch(List.of(change(10, 1)), new RecordingCommitter());
        // the failed attempt and the retry; the next batch then waits in flight
        applier.permits.release(2);
        consumer.handleBatch(List.of(change(11, 2)), new RecordingCommitter());
        assertThat(journal).containsExactly(
                "batch finished",
                "apply failed",
                "apply 1 events, positions [{\"lsn\":10}]",
                "processed 10",
                "batch finished");
        applier.permits.release(1);
        sink[0].close();
    }
}
