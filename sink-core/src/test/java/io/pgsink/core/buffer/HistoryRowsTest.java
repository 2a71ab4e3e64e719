package io.pgsink.core.buffer;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A history table's buffer: every change appended as it came, nothing merged. */
class HistoryRowsTest
{
    private static final TableSchema ITEMS = TableSchema.of(TableId.of("shop", "items"), List.of("id", "name", "blob"), List.of("id"));

    private static SourcePosition at(long offset)
    {
        return new SourcePosition("p", Long.toString(offset));
    }

    @Test
    void everyChangeIsAppendedInOrder()
    {
        TableBuffer buffer = new TableBuffer(ITEMS.table(), true);
        buffer.add(ChangeEvent.insert(ITEMS, new Object[] {1, "a", "big"}, at(1), 10));
        buffer.add(ChangeEvent.update(ITEMS, null, new Object[] {1, "b", UnavailableValue.INSTANCE}, at(2), 20));
        buffer.add(ChangeEvent.truncate(ITEMS.table(), at(3), 30));
        buffer.add(ChangeEvent.update(ITEMS, new Object[] {1, null, null}, new Object[] {2, "c", UnavailableValue.INSTANCE}, at(4), 40));
        buffer.add(ChangeEvent.delete(ITEMS, new Object[] {2, null, null}, at(5), 50));
        TableBatch batch = buffer.toBatch();
        assertThat(batch.truncate()).isFalse();
        assertThat(batch.events()).isEqualTo(5);
        assertThat(batch.changes()).extracting(RowChange::operation)
                .containsExactly(Operation.INSERT, Operation.UPDATE, Operation.DELETE, Operation.UPDATE, Operation.DELETE);
        assertThat(batch.changes()).extracting(change -> Arrays.asList(change.row()))
                .containsExactly(List.of(1, "a", "big"), List.of(1, "b", "big"), Arrays.asList(1, null, null), List.of(2, "c", "big"), Arrays.asList(2, null, null));
        assertThat(batch.changes()).extracting(RowChange::sourceTimeMillis).containsExactly(10L, 20L, 40L, 40L, 50L);
        assertThat(batch.changes()).extracting(change -> change.position().offset()).containsExactly("1", "2", "4", "4", "5");
        assertThat(batch.changes()).noneMatch(RowChange::hasUnavailableValues);
    }

    @Test
    void unavailableValueWithoutEarlierImageFails()
    {
        TableBuffer buffer = new TableBuffer(ITEMS.table(), true);
        assertThatThrownBy(() -> buffer.add(ChangeEvent.update(ITEMS, null, new Object[] {7, "x", UnavailableValue.INSTANCE}, at(9), 0)))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA))
                .hasMessageContaining("\"shop\".\"items\"")
                .hasMessageContaining("column(s) [blob]")
                .hasMessageContaining("offset 9 of p")
                .hasMessageContaining("REPLICA IDENTITY FULL");
    }
}
