package io.pgsink.merge.write;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.TableNameFormat;
import io.pgsink.merge.write.RejectedRowIsolator.Ending;
import io.pgsink.merge.write.RejectedRowIsolator.TableFailure;
import io.pgsink.merge.write.RejectedRowIsolator.Transactions;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The tolerance loop and the bisection, against a fake target that refuses some keys. */
class RejectedRowIsolatorTest
{
    private static final TableSchema ORDERS = TableSchema.of(TableId.of("src", "a_orders"), List.of("id", "note"), List.of("id"));
    private static final TableSchema ITEMS = TableSchema.of(TableId.of("src", "b_items"), List.of("id", "note"), List.of("id"));
    private static final TableNameFormat ROUTING = TableNameFormat.parse("dw.${table}");

    @Test
    void bisectsToEachRefusedRowAndCommitsTheRest()
    {
        Batch batch = batch(100);
        FakeTarget target = new FakeTarget(Set.of(17, 63), new SinkException(ErrorCode.DATA, "new row violates check constraint"));
        List<RejectedRow> rejected = new RejectedRowIsolator(true, ROUTING).apply(batch, target);

        assertThat(rejected).extracting(row -> row.change().key().value(0)).containsExactly(17, 63);
        assertThat(rejected).allSatisfy(row -> {
            assertThat(row.table()).isEqualTo(ORDERS.table());
            assertThat(row.target()).isEqualTo(TableId.of("dw", "a_orders"));
            assertThat(row.column()).isEmpty();
            assertThat(row.reason()).isEqualTo("new row violates check constraint");
        });
        // one commit, with every other change of both tables and the refused rows for the dead letters
        assertThat(target.committed).hasSize(1);
        assertThat(changes(target.committed.get(0), ORDERS.table())).hasSize(98);
        assertThat(changes(target.committed.get(0), ITEMS.table())).hasSize(3);
        assertThat(target.committedRejected).isEqualTo(rejected);
        // a bisection of 100 changes takes 7 probes; the second skips nothing it learned from the first
        assertThat(target.probes).isLessThanOrEqualTo(14);
        // a probe stops at the failing table: the tables after it are left out
        assertThat(target.probedTables).doesNotContain(ITEMS.table());
    }

    @Test
    void aRowNamedByTheFailureNeedsNoBisection()
    {
        Batch batch = batch(10);
        RowChange bad = changes(batch, ORDERS.table()).get(4);
        AtomicReference<Batch> committed = new AtomicReference<>();
        Transactions target = (current, rejected, ending) -> {
            assertThat(ending).isEqualTo(Ending.COMMIT);
            if (changes(current, ORDERS.table()).contains(bad)) {
                throw new TableFailure(ORDERS.table(), new RowRejectedException(ErrorCode.DATA, ORDERS.table(), TableId.of("dw", "a_orders"), bad, "note", "value too long", new IllegalStateException()));
            }
            committed.set(current);
        };
        List<RejectedRow> rejected = new RejectedRowIsolator(true, ROUTING).apply(batch, target);
        assertThat(rejected).singleElement().satisfies(row -> {
            assertThat(row.change()).isSameAs(bad);
            assertThat(row.column()).contains("note");
            assertThat(row.reason()).isEqualTo("value too long");
        });
        assertThat(changes(committed.get(), ORDERS.table())).hasSize(9).doesNotContain(bad);
    }

    @Test
    void withoutToleranceTheRowIsIsolatedToBeNamed()
    {
        SinkException failure = new SinkException(ErrorCode.DATA, "new row violates check constraint");
        FakeTarget target = new FakeTarget(Set.of(3), failure);
        assertThatThrownBy(() -> new RejectedRowIsolator(false, ROUTING).apply(batch(10), target))
                .isInstanceOf(SinkException.class)
                .hasMessage("Cannot write a row of \"dw\".\"a_orders\" key (3) (from \"src\".\"a_orders\" at offset {\"lsn\":4} of p): new row violates check constraint")
                .satisfies(e -> assertThat(((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA));
        assertThat(target.probes).as("found by bisection, in transactions that roll back").isPositive();
    }

    @Test
    void failuresOfOtherKindsAreThrownAsTheyAre()
    {
        SinkException missing = new SinkException(ErrorCode.SCHEMA_MISMATCH, "column does not exist");
        assertThatThrownBy(() -> new RejectedRowIsolator(true, ROUTING).apply(batch(10), new FakeTarget(Set.of(3), missing))).isSameAs(missing);

        // outside any table (the positions, the dead letters): nothing to bisect
        SinkException positions = new SinkException(ErrorCode.DATA, "value too long for the offsets table");
        assertThatThrownBy(() -> new RejectedRowIsolator(true, ROUTING).apply(batch(10), (current, rejected, ending) -> {
            throw positions;
        })).isSameAs(positions);
    }

    @Test
    void aTransientFailureWhileBisectingStopsIt()
    {
        SinkException lost = new SinkException(ErrorCode.TRANSIENT, "connection lost");
        Transactions target = (current, rejected, ending) -> {
            switch (ending) {
                case COMMIT -> throw new TableFailure(ORDERS.table(), new SinkException(ErrorCode.DATA, "check violation"));
                case ROLLBACK -> throw lost;
            }
        };
        assertThatThrownBy(() -> new RejectedRowIsolator(true, ROUTING).apply(batch(10), target)).isSameAs(lost);
    }

    @Test
    void givesUpWhenTheFailureIsNotOfSingleRows()
    {
        // every row is refused: after 100 (at least a tenth of the batch, and at least 100) the sink stops
        Batch batch = batch(300);
        Set<Object> all = new HashSet<>();
        for (int i = 0; i < 300; i++) {
            all.add(i);
        }
        assertThatThrownBy(() -> new RejectedRowIsolator(true, ROUTING).apply(batch, new FakeTarget(all, new SinkException(ErrorCode.DATA, "refused"))))
                .isInstanceOf(SinkException.class)
                .hasMessageStartingWith("Gave up applying a batch of 303 events after the target refused 101 rows of it: the failure does not seem to be caused by single rows."
                        + " First refused: \"dw\".\"a_orders\" key ")
                .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA);
    }

    /** Refuses the orders whose key is in {@code refused}, as a statement would: without naming the row. */
    private static final class FakeTarget
            implements Transactions
    {
        private final Set<?> refused;
        private final SinkException failure;
        private final List<Batch> committed = new ArrayList<>();
        private final List<RejectedRow> committedRejected = new ArrayList<>();
        private final List<TableId> probedTables = new ArrayList<>();
        private int probes;

        FakeTarget(Set<?> refused, SinkException failure)
        {
            this.refused = refused;
            this.failure = failure;
        }

        @Override
        public void run(Batch batch, List<RejectedRow> rejected, Ending ending)
        {
            if (ending == Ending.ROLLBACK) {
                probes++;
            }
            for (TableBatch table : batch.tables()) {
                if (ending == Ending.ROLLBACK) {
                    probedTables.add(table.table());
                }
                for (RowChange change : table.changes()) {
                    if (table.table().equals(ORDERS.table()) && refused.contains(change.key().value(0))) {
                        throw new TableFailure(table.table(), failure);
                    }
                }
            }
            if (ending == Ending.COMMIT) {
                committed.add(batch);
                committedRejected.addAll(rejected);
            }
        }
    }

    /** {@code orders} inserts of keys 0 to n - 1, then three {@code items} inserts, merged as the sink merges them. */
    private static Batch batch(int orders)
    {
        AtomicReference<Batch> flushed = new AtomicReference<>();
        BatchApplier capture = new BatchApplier()
        {
            @Override
            public void apply(Batch batch)
            {
                flushed.set(batch);
            }

            @Override
            public Map<String, SourcePosition> committedPositions()
            {
                return Map.of();
            }

            @Override
            public void close() {}
        };
        try (BufferedSink sink = new BufferedSink("isolator", new FlushPolicy(100_000, Long.MAX_VALUE, 0), capture)) {
            long offset = 0;
            for (int i = 0; i < orders; i++) {
                sink.accept(ChangeEvent.insert(ORDERS, new Object[] {i, "order " + i}, position(++offset), 0));
            }
            for (int i = 0; i < 3; i++) {
                sink.accept(ChangeEvent.insert(ITEMS, new Object[] {i, "item " + i}, position(++offset), 0));
            }
            sink.flush();
        }
        return flushed.get();
    }

    private static List<RowChange> changes(Batch batch, TableId table)
    {
        Optional<TableBatch> found = batch.tables().stream().filter(each -> each.table().equals(table)).findFirst();
        return found.map(TableBatch::changes).orElse(List.of());
    }

    private static SourcePosition position(long offset)
    {
        return new SourcePosition("p", "{\"lsn\":" + offset + "}");
    }
}
