package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What {@link SourceTableWatch} stores of its readings, without a database: never a change still to
 * be stopped at, so that a crash at any moment, however far the stream got, finds it again at the
 * next start.
 */
class SourceTableWatchTest
{
    private static final TableChanges CHANGES = new TableChanges(table -> table.table().startsWith("t_"), true, table -> table);

    private SourceTables current = tables();
    private final TestingStore store = new TestingStore();

    private static SourceTables tables(SourceTables.Table... tables)
    {
        return new SourceTables(Arrays.stream(tables).collect(Collectors.toMap(SourceTables.Table::oid, Function.identity())));
    }

    private static SourceTables.Table table(long oid, String name)
    {
        return new SourceTables.Table(oid, TableId.of("public", name), false, 0, null, false);
    }

    private SourceTableWatch start(boolean resuming)
    {
        return SourceTableWatch.startUnscheduled("test", () -> current, CHANGES, store, resuming);
    }

    @Test
    void aFreshStartStoresTheCapturedTablesAsItFindsThem()
    {
        store.stored.add(tables(table(1, "t_a")));
        current = tables(table(2, "t_a"), table(3, "other"));
        try (SourceTableWatch watch = start(false)) {
            // positions are gone: the stored reading is of another life, not compared with
            assertThat(watch.failure()).isEmpty();
            assertThat(store.last()).isEqualTo(tables(table(2, "t_a")));
        }
    }

    @Test
    void aRenameIsNeverStoredSoACrashBeforeItsFirstChangeFindsItAgain()
    {
        current = tables(table(1, "t_a"), table(2, "t_b"));
        try (SourceTableWatch watch = start(false)) {
            current = tables(table(1, "t_renamed"), table(2, "t_b"));
            watch.check();
            // another table dropped after the rename: readings are no longer stored
            current = tables(table(1, "t_renamed"));
            watch.check();
            assertThat(store.stored).containsExactly(tables(table(1, "t_a"), table(2, "t_b")));
        }
        // the service dies before the first change under the new name; the next start
        try (SourceTableWatch watch = start(true)) {
            assertThatThrownBy(() -> watch.beforeFirstChange(TableId.of("public", "t_renamed"))).isInstanceOf(SinkException.class)
                    .hasMessageStartingWith("Source table \"public\".\"t_a\" was renamed to \"public\".\"t_renamed\" (the same table, oid 1) while pgsink was stopped (or before its last stop):");
            // a change under the old name was made before the rename, and comes without its key
            assertThatThrownBy(() -> watch.beforeFirstChange(TableId.of("public", "t_a"))).isInstanceOf(SinkException.class)
                    .hasMessageContaining("after changes pgsink had not streamed yet: they arrive under the old name");
            assertThat(store.stored).hasSize(1);
        }
    }

    @Test
    void aTableCreatedAgainWhileStoppedStopsTheStartAndIsNotStored()
    {
        current = tables(table(1, "t_a"));
        start(false).close();
        current = tables(table(5, "t_a"));
        try (SourceTableWatch watch = start(true)) {
            assertThat(watch.failure()).hasValueSatisfying(failure -> assertThat(failure.getMessage())
                    .startsWith("Source table \"public\".\"t_a\" was dropped and created again (oid 1, now 5) while pgsink was stopped"));
        }
        assertThat(store.stored).containsExactly(tables(table(1, "t_a")));
    }

    @Test
    void whatOnlyWarnsIsStoredOnce()
    {
        current = tables(table(1, "t_a"), table(2, "t_b"));
        try (SourceTableWatch watch = start(false)) {
            current = tables(table(2, "t_b"), table(3, "t_new"), table(4, "other"));
            watch.check();
            watch.check();
        }
        assertThat(store.stored).containsExactly(tables(table(1, "t_a"), table(2, "t_b")), tables(table(2, "t_b"), table(3, "t_new")));
        try (SourceTableWatch watch = start(true)) {
            assertThat(watch.failure()).isEmpty();
        }
        assertThat(store.stored).hasSize(2);
    }

    /** A target that stores readings in memory. */
    private static final class TestingStore
            implements ReadingStore
    {
        private final List<SourceTables> stored = new ArrayList<>();

        SourceTables last()
        {
            return stored.get(stored.size() - 1);
        }

        @Override
        public Optional<SourceTables> load()
        {
            return stored.isEmpty() ? Optional.empty() : Optional.of(last());
        }

        @Override
        public void store(SourceTables captured)
        {
            stored.add(captured);
        }

        @Override
        public boolean targetRenamed(TableId from, TableId to)
        {
            return TableChanges.StoredReading.NONE.targetRenamed(from, to);
        }

        @Override
        public Optional<String> forgetStatement(TableId sourceTable)
        {
            return TableChanges.StoredReading.NONE.forgetStatement(sourceTable);
        }

        @Override
        public void close() {}
    }
}
