package io.pgsink.connector.standalone;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.core.Backoff;
import io.pgsink.core.Batch;
import io.pgsink.core.BatchApplier;
import io.pgsink.core.BufferedSink;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.FlushPolicy;
import io.pgsink.core.Sink;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableBatch;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
    private final List<String> journal = new ArrayList<>();

    private class RecordingApplier
            implements BatchApplier
    {
        private int failuresLeft;

        @Override
        public void apply(Batch batch)
        {
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
        Schema schema = SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat").field("ts_ms", Schema.INT64_SCHEMA).build();
        SourceRecord record = new SourceRecord(Map.of("server", "db1"), Map.of("lsn", lsn), "__debezium-heartbeat.db1", null, null, schema, new Struct(schema).put("ts_ms", 5L));
        return () -> record;
    }

    private SinkChangeConsumer consumer(RecordingApplier applier, long maxEvents)
    {
        BufferedSink sink = new BufferedSink("test", new FlushPolicy(maxEvents, 1 << 30, 60_000), applier);
        return new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 2000L, new Backoff(1, 1));
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
    void takesDebeziumsDeleteAndCreateOfAKeyChangeAsOneUpdate()
            throws Exception
    {
        List<String> calls = new ArrayList<>();
        Sink sink = new Sink()
        {
            @Override
            public void accept(ChangeEvent event)
            {
                calls.add("accept " + event.operation() + " " + id(event) + " at " + event.position().offset());
            }

            @Override
            public void acceptKeyChange(ChangeEvent delete, ChangeEvent insert)
            {
                calls.add("key change " + id(delete) + " -> " + id(insert));
            }

            @Override
            public void advance(SourcePosition position) {}

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
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 0L, new Backoff(1, 1));
        consumer.handleBatch(List.of(
                keyChange(10, 1, "d", "__debezium.newkey", 2),
                keyChange(11, 2, "c", "__debezium.oldkey", 1),
                change(12, 3),
                // the delete of a pair whose create is in the next batch: taken as it is, at the
                // position before it (Debezium gives both records the position of their one message)
                keyChange(13, 3, "d", "__debezium.newkey", 4)), new RecordingCommitter());
        consumer.handleBatch(List.of(keyChange(14, 4, "c", "__debezium.oldkey", 3)), new RecordingCommitter());
        assertThat(calls).containsExactly("key change 1 -> 2", "accept INSERT 3 at {\"lsn\":12}", "accept DELETE 3 at {\"lsn\":12}", "accept INSERT 4 at {\"lsn\":14}");
        assertThat(consumer.lastPosition()).isEqualTo("{\"lsn\":14}");
        assertThat(journal).containsExactly("processed 10", "processed 11", "processed 12", "processed 13", "batch finished", "processed 14", "batch finished");
    }

    private static Object id(ChangeEvent event)
    {
        return (event.after() != null ? event.after() : event.before())[0];
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
        SinkChangeConsumer consumer = new SinkChangeConsumer("test", sink, new DebeziumRecordMapper(), new SinkMetrics("test"), () -> 0L, new Backoff(1, 1));
        assertThatThrownBy(() -> consumer.handleBatch(List.of(change(10, 1)), new RecordingCommitter())).hasMessage("row rejected");
        assertThat(journal).isEmpty();
    }
}
