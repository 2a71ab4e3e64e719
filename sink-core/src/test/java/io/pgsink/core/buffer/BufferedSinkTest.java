package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BufferedSinkTest
{
    private static final TableId ORDERS = TableId.of("shop", "orders");
    private static final TableId ITEMS = TableId.of("shop", "items");
    private static final TableSchema ORDERS_SCHEMA = TableSchema.of(ORDERS, List.of("id", "status", "note"), List.of("id"));
    private static final TableSchema ITEMS_SCHEMA = TableSchema.of(ITEMS, List.of("order_id", "line", "sku"), List.of("order_id", "line"));

    private final AtomicLong clock = new AtomicLong();
    private final InMemoryTarget target = new InMemoryTarget();

    private BufferedSink sink(long maxEvents, long maxBytes, long intervalMillis)
    {
        return new BufferedSink("test", new FlushPolicy(maxEvents, maxBytes, intervalMillis), target, FlushListener.NONE, clock::get);
    }

    private static SourcePosition at(long offset)
    {
        return new SourcePosition("db", String.valueOf(offset));
    }

    @Test
    void lastChangeWinsAndDeletesAreTouched()
    {
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "new", "a"}, at(1), 0));
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, null, new Object[] {1L, "paid", "a"}, at(2), 0));
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {2L, "new", "b"}, at(3), 0));
            sink.accept(ChangeEvent.delete(ORDERS_SCHEMA, new Object[] {2L, null, null}, at(4), 0));
            sink.flush();
        }
        assertThat(target.batches).hasSize(1);
        TableBatch batch = target.batches.get(0).tables().get(0);
        assertThat(batch.events()).isEqualTo(4);
        assertThat(batch.changes()).hasSize(2);
        assertThat(batch.changes().get(0).row()).containsExactly(1L, "paid", "a");
        assertThat(batch.changes().get(1).isDelete()).isTrue();
        assertThat(batch.changes().get(1).position()).isEqualTo(at(4));
        assertThat(target.positions).containsExactly(java.util.Map.entry("db", at(4)));
    }

    @Test
    void keyChangeDeletesTheOldKey()
    {
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, new Object[] {1L, null, null}, new Object[] {5L, "moved", "x"}, at(1), 0));
            sink.flush();
        }
        List<RowChange> changes = target.batches.get(0).tables().get(0).changes();
        assertThat(changes).extracting(change -> change.key().toString(), RowChange::isDelete)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("(1)", true), org.assertj.core.groups.Tuple.tuple("(5)", false));
    }

    @Test
    void truncateDropsEarlierChangesAndKeepsLaterOnes()
    {
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            sink.accept(ChangeEvent.truncate(ORDERS, at(2), 0));
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {2L, "b", "b"}, at(3), 0));
            sink.flush();
        }
        TableBatch batch = target.batches.get(0).tables().get(0);
        assertThat(batch.truncate()).isTrue();
        assertThat(batch.changes()).extracting(change -> change.key().toString()).containsExactly("(2)");
    }

    @Test
    void unavailableValueIsFilledFromEarlierImageOfTheSameKey()
    {
        target.table(ORDERS).put(new RowKey(new Object[] {3L}), List.of(3L, "new", "from target"));
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "new", "huge"}, at(1), 0));
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, null, new Object[] {1L, "paid", UnavailableValue.INSTANCE}, at(2), 0));
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, null, new Object[] {3L, "paid", UnavailableValue.INSTANCE}, at(3), 0));
            sink.flush();
        }
        TableBatch batch = target.batches.get(0).tables().get(0);
        assertThat(batch.changes().get(0).row()).containsExactly(1L, "paid", "huge");
        assertThat(batch.changes().get(0).hasUnavailableValues()).isFalse();
        assertThat(batch.changes().get(1).hasUnavailableValues()).isTrue();
        assertThat(batch.rowsWithUnavailableValues()).isEqualTo(1);
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {3L}))).containsExactly(3L, "paid", "from target");
    }

    @Test
    void keyChangeTakesUnchangedToastValuesFromTheOldKey()
    {
        target.table(ORDERS).put(new RowKey(new Object[] {1L}), List.of(1L, "old", "big note"));
        target.table(ORDERS).put(new RowKey(new Object[] {3L}), List.of(3L, "old", "other big note"));
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            // an update that names the old key
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, new Object[] {1L, null, null}, new Object[] {2L, "moved", UnavailableValue.INSTANCE}, at(7), 0));
            // Debezium's form: a delete of the old key, then an insert of the new key marked with the old one
            sink.acceptKeyChange(ChangeEvent.delete(ORDERS_SCHEMA, new Object[] {3L, null, null}, at(8), 0),
                    ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {4L, "moved too", UnavailableValue.INSTANCE}, at(8), 0));
            // and a chain: 4 moves on to 5 in the same batch
            sink.acceptKeyChange(ChangeEvent.delete(ORDERS_SCHEMA, new Object[] {4L, null, null}, at(9), 0),
                    ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {5L, "moved twice", UnavailableValue.INSTANCE}, at(9), 0));
            sink.flush();
        }
        List<RowChange> changes = target.batches.get(0).tables().get(0).changes();
        assertThat(changes).filteredOn(change -> !change.isDelete())
                .extracting(change -> change.key() + " from " + change.fillFrom().map(RowKey::toString).orElse("-"))
                .containsExactly("(2) from (1)", "(5) from (3)");
        assertThat(target.table(ORDERS)).containsOnlyKeys(new RowKey(new Object[] {2L}), new RowKey(new Object[] {5L}));
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {2L}))).containsExactly(2L, "moved", "big note");
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {5L}))).containsExactly(5L, "moved twice", "other big note");
    }

    @Test
    void theNewRowOfAKeyChangeIsFilledFromTheOldKeyInEitherOrderWithoutDeletingIt()
    {
        target.table(ORDERS).put(new RowKey(new Object[] {1L}), List.of(1L, "old", "big note"));
        target.table(ORDERS).put(new RowKey(new Object[] {3L}), List.of(3L, "old", "other big note"));
        target.table(ORDERS).put(new RowKey(new Object[] {6L}), List.of(6L, "old", "third big note"));
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            // the delete of the old key first, as one partition gives them
            sink.accept(ChangeEvent.delete(ORDERS_SCHEMA, new Object[] {1L, null, null}, at(1), 0));
            sink.accept(ChangeEvent.insertMovedFrom(ORDERS_SCHEMA, new Object[] {1L, null, null}, new Object[] {2L, "moved", UnavailableValue.INSTANCE}, at(2), 0));
            // the create first, as two partitions may give them
            sink.accept(ChangeEvent.insertMovedFrom(ORDERS_SCHEMA, new Object[] {3L, null, null}, new Object[] {4L, "moved too", UnavailableValue.INSTANCE}, at(3), 0));
            sink.accept(ChangeEvent.delete(ORDERS_SCHEMA, new Object[] {3L, null, null}, at(4), 0));
            // the old key's own delete has not come yet: the old row stays
            sink.accept(ChangeEvent.insertMovedFrom(ORDERS_SCHEMA, new Object[] {6L, null, null}, new Object[] {7L, "copied", UnavailableValue.INSTANCE}, at(5), 0));
            sink.flush();
        }
        assertThat(target.table(ORDERS)).containsOnlyKeys(new RowKey(new Object[] {2L}), new RowKey(new Object[] {4L}), new RowKey(new Object[] {6L}), new RowKey(new Object[] {7L}));
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {2L}))).containsExactly(2L, "moved", "big note");
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {4L}))).containsExactly(4L, "moved too", "other big note");
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {6L}))).containsExactly(6L, "old", "third big note");
        assertThat(target.table(ORDERS).get(new RowKey(new Object[] {7L}))).containsExactly(7L, "copied", "third big note");
    }

    @Test
    void tablesAreFlushedTogetherInTableOrder()
    {
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            sink.accept(ChangeEvent.insert(ITEMS_SCHEMA, new Object[] {1L, 1, "sku"}, at(2), 0));
            sink.flush();
        }
        assertThat(target.batches).hasSize(1);
        assertThat(target.batches.get(0).tables()).extracting(TableBatch::table).containsExactly(ITEMS, ORDERS);
    }

    @Test
    void flushesWhenFullByEventsOrBytesAndWhenDue()
    {
        try (BufferedSink sink = sink(3, Long.MAX_VALUE, 1000)) {
            for (long i = 0; i < 7; i++) {
                sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {i, "a", "a"}, at(i), 0));
            }
            assertThat(target.batches).hasSize(2);
            assertThat(sink.bufferedEvents()).isEqualTo(1);
            clock.addAndGet(999_000_000L);
            assertThat(sink.flushIfDue()).isFalse();
            clock.addAndGet(1_000_000L);
            assertThat(sink.flushIfDue()).isTrue();
            assertThat(target.batches).hasSize(3);
            assertThat(sink.flushIfDue()).isFalse();
        }
        try (BufferedSink sink = sink(1000, 1000, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "x".repeat(2000)}, at(1), 0));
            assertThat(target.batches).hasSize(4);
            assertThat(sink.bufferedBytes()).isZero();
        }
    }

    @Test
    void bufferedBytesFollowTheMergedState()
    {
        try (BufferedSink sink = sink(1000, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "x".repeat(10_000)}, at(1), 0));
            long one = sink.bufferedBytes();
            assertThat(one).isGreaterThan(10_000);
            sink.accept(ChangeEvent.update(ORDERS_SCHEMA, null, new Object[] {1L, "a", "x".repeat(10_000)}, at(2), 0));
            assertThat(sink.bufferedBytes()).isEqualTo(one);
            sink.accept(ChangeEvent.truncate(ORDERS, at(3), 0));
            assertThat(sink.bufferedBytes()).isZero();
        }
    }

    @Test
    void failedFlushKeepsBufferForRetry()
    {
        try (BufferedSink sink = sink(1000, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            target.failNext = new SinkException(ErrorCode.TRANSIENT, "connection lost");
            assertThatThrownBy(sink::flush).hasMessage("connection lost");
            assertThat(sink.bufferedEvents()).isEqualTo(1);
            assertThat(sink.committedPositions()).isEmpty();
            sink.flush();
            assertThat(target.table(ORDERS)).hasSize(1);
            assertThat(sink.committedPositions()).containsEntry("db", at(1));
        }
    }

    @Test
    void schemaChangeFlushesFirst()
    {
        TableSchema widened = TableSchema.of(ORDERS, List.of("id", "status", "note", "extra"), List.of("id"));
        try (BufferedSink sink = sink(1000, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            sink.accept(ChangeEvent.insert(widened, new Object[] {2L, "a", "a", "e"}, at(2), 0));
            assertThat(target.batches).hasSize(1);
            sink.flush();
        }
        assertThat(target.batches).hasSize(2);
        assertThat(target.batches.get(1).tables().get(0).schema()).contains(widened);
    }

    @Test
    void keylessTableAppendsInsertsAndRefusesUpdates()
    {
        TableSchema log = TableSchema.of(TableId.of("s", "log"), List.of("message"), List.of());
        try (BufferedSink sink = sink(1000, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(log, new Object[] {"same"}, at(1), 0));
            sink.accept(ChangeEvent.insert(log, new Object[] {"same"}, at(2), 0));
            assertThatThrownBy(() -> sink.accept(ChangeEvent.update(log, null, new Object[] {"x"}, at(3), 0)))
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("Cannot apply UPDATE to \"s\".\"log\" at offset 3 of db: the table has no primary key")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
            sink.flush();
        }
        assertThat(target.batches.get(0).tables().get(0).changes()).hasSize(2);
    }

    @Test
    void keylessRowsCountTowardsTheByteLimit()
    {
        TableSchema log = TableSchema.of(TableId.of("s", "log"), List.of("message"), List.of());
        String message = "m".repeat(10_000);
        // an entry without its row is a few hundred bytes: only counting the 10 kB values reaches the limit
        try (BufferedSink sink = sink(1000, 25_000, 1000)) {
            for (int i = 1; i <= 3; i++) {
                sink.accept(ChangeEvent.insert(log, new Object[] {message}, at(i), 0));
            }
            assertThat(target.batches).as("flushed when the rows' values passed buffer.max.bytes").hasSize(1);
            assertThat(target.batches.get(0).tables().get(0).changes()).hasSize(3);
        }
    }

    @Test
    void advanceStoresPositionWithoutChanges()
    {
        try (BufferedSink sink = sink(1000, Long.MAX_VALUE, 0)) {
            sink.advance(at(42));
            assertThat(sink.flushIfDue()).isTrue();
            assertThat(target.positions).containsEntry("db", at(42));
            assertThat(target.batches.get(0).tables()).isEmpty();
        }
    }

    @Test
    void sourceTransactionIsFlushedWholeWhateverTheEventLimit()
    {
        try (BufferedSink sink = sink(2, Long.MAX_VALUE, 0)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            sink.beginTransaction("tx 7");
            for (long id = 2; id <= 6; id++) {
                sink.accept(ChangeEvent.insert(id % 2 == 0 ? ORDERS_SCHEMA : ITEMS_SCHEMA, new Object[] {id, "b", "b"}, at(id), 0));
            }
            assertThat(sink.flushIfDue()).as("the interval does not split a transaction").isFalse();
            assertThat(target.batches).as("nothing of the open transaction is applied").isEmpty();
            assertThat(sink.inTransaction()).isTrue();
            assertThat(sink.endTransaction()).isTrue();
            assertThat(sink.inTransaction()).isFalse();
        }
        assertThat(target.batches).hasSize(1);
        assertThat(target.batches.get(0).events()).isEqualTo(6);
        assertThat(target.positions).containsExactly(java.util.Map.entry("db", at(6)));
    }

    @Test
    void sourceTransactionLargerThanTheBufferStopsWithNothingOfItApplied()
    {
        try (BufferedSink sink = sink(1, 2_000, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "before", "a"}, at(1), 0));
            assertThat(target.batches).hasSize(1);
            sink.beginTransaction("tx 8");
            assertThatThrownBy(() -> {
                for (long id = 2; id < 10_000; id++) {
                    sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {id, "in the large transaction", "x".repeat(100)}, at(id), 0));
                }
            }).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                    .hasMessageContaining("source transaction tx 8 takes more than buffer.max.bytes (2000 bytes)")
                    .hasMessageContaining("raise buffer.max.bytes");
        }
        assertThat(target.batches).as("only the event before the transaction").hasSize(1);
        assertThat(target.positions).containsExactly(java.util.Map.entry("db", at(1)));
    }

    @Test
    void transactionsEndAtTheirEnd()
    {
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            assertThatThrownBy(sink::endTransaction).isInstanceOf(IllegalStateException.class);
            sink.beginTransaction("tx 1");
            assertThatThrownBy(() -> sink.beginTransaction("tx 2")).isInstanceOf(IllegalStateException.class).hasMessageContaining("tx 2 begins while tx 1 has not ended");
            assertThat(sink.endTransaction()).as("below the limits: buffered on").isFalse();
        }
    }

    /** The documented exception: one buffer holds one schema per table, so a schema change inside a transaction flushes what came before it. */
    @Test
    void schemaChangeInsideATransactionFlushesThePartBeforeIt()
    {
        TableSchema widened = TableSchema.of(ORDERS, List.of("id", "status", "note", "extra"), List.of("id"));
        try (BufferedSink sink = sink(100, Long.MAX_VALUE, 1000)) {
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {1L, "a", "a"}, at(1), 0));
            sink.beginTransaction("tx 3");
            sink.accept(ChangeEvent.insert(widened, new Object[] {2L, "b", "b", "x"}, at(2), 0));
            assertThat(target.batches).as("a change at the transaction's start: only whole transactions before it are flushed").hasSize(1);
            assertThat(target.batches.get(0).events()).isEqualTo(1);
            sink.accept(ChangeEvent.insert(ORDERS_SCHEMA, new Object[] {3L, "c", "c"}, at(3), 0));
            assertThat(target.batches).as("a change inside it: the part before is flushed").hasSize(2);
            sink.endTransaction();
            sink.flush();
        }
        assertThat(target.batches).hasSize(3);
    }
}
