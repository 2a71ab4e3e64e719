package io.pgsink.bench.workload;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.core.config.CopyFormat;
import org.apache.kafka.connect.sink.SinkRecord;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/**
 * A reproducible change stream over a table of {@link Columns}, with the final state it must leave.
 *
 * <ul>
 * <li>S1: {@code events} inserts of new keys into an empty table.</li>
 * <li>S2: {@code events} changes against a table of {@code baseRows} rows: 50% inserts of new keys,
 *     35% updates (a third of them of keys updated shortly before, so keys repeat within a batch),
 *     15% deletes. The same stream over the wide table is "S2 wide".</li>
 * </ul>
 * The target starts with the base rows of keys 1 to {@code baseRows} ({@link Columns#baseRowsSql});
 * {@link #touched} holds the final row of every key the stream touched, {@code null} for a key it
 * deleted. Untouched base rows stay as they are.
 */
public final class Workload
{
    public enum Kind
    {
        INSERT, UPDATE, DELETE
    }

    /** One change; {@code row} is null for a delete. */
    public record Change(Kind kind, long key, Object[] row) {}

    public final String name;
    public final Columns columns;
    public final long baseRows;
    public final List<Change> changes;
    final TreeMap<Long, Object[]> touched;
    private List<SinkRecord> records;

    private Workload(String name, Columns columns, long baseRows, List<Change> changes, TreeMap<Long, Object[]> touched)
    {
        this.name = requireNonNull(name, "name is null");
        this.columns = requireNonNull(columns, "columns is null");
        this.baseRows = baseRows;
        this.changes = requireNonNull(changes, "changes is null");
        this.touched = requireNonNull(touched, "touched is null");
    }

    public static Workload inserts(long events, long seed)
    {
        return inserts("S1 inserts", Columns.NARROW, events, seed);
    }

    public static Workload inserts(String name, Columns columns, long events, long seed)
    {
        Random random = new Random(seed);
        List<Change> changes = new ArrayList<>((int) events);
        TreeMap<Long, Object[]> state = new TreeMap<>();
        for (long key = 1; key <= events; key++) {
            Object[] row = columns.randomRow(random, key);
            changes.add(new Change(Kind.INSERT, key, row));
            state.put(key, row);
        }
        return new Workload(name, columns, 0, changes, state);
    }

    public static Workload mixed(long events, long baseRows, long seed)
    {
        return mixed("S2 mixed", Columns.NARROW, events, baseRows, seed);
    }

    public static Workload mixed(String name, Columns columns, long events, long baseRows, long seed)
    {
        Random random = new Random(seed);
        List<Change> changes = new ArrayList<>((int) events);
        TreeMap<Long, Object[]> touched = new TreeMap<>();
        // live keys in an array for O(1) random picks and removals
        long[] live = new long[(int) (baseRows + events)];
        int liveCount = 0;
        for (long key = 1; key <= baseRows; key++) {
            live[liveCount++] = key;
        }
        long nextKey = baseRows + 1;
        for (long i = 0; i < events; i++) {
            int dice = random.nextInt(100);
            if (dice < 50 || liveCount == 0) {
                long key = nextKey++;
                Object[] row = columns.randomRow(random, key);
                changes.add(new Change(Kind.INSERT, key, row));
                touched.put(key, row);
                live[liveCount++] = key;
            }
            else if (dice < 85) {
                int index = random.nextInt(3) == 0
                        ? liveCount - 1 - random.nextInt(Math.min(liveCount, 5_000))
                        : random.nextInt(liveCount);
                long key = live[index];
                Object[] row = columns.randomRow(random, key);
                changes.add(new Change(Kind.UPDATE, key, row));
                touched.put(key, row);
            }
            else {
                int index = random.nextInt(liveCount);
                long key = live[index];
                live[index] = live[--liveCount];
                changes.add(new Change(Kind.DELETE, key, null));
                touched.put(key, null);
            }
        }
        return new Workload(name, columns, baseRows, changes, touched);
    }

    /** The changes as Debezium's Kafka Connect records ({@link ConnectRecords}), built on first use. */
    public List<SinkRecord> connectRecords()
    {
        if (records == null) {
            records = new ConnectRecords(columns).records(this);
        }
        return records;
    }

    /** The number of rows the stream leaves. */
    public long finalRowCount()
    {
        long deletedBase = touched.entrySet().stream().filter(entry -> entry.getValue() == null
                && entry.getKey() <= baseRows).count();
        long insertedLive = touched.entrySet().stream().filter(entry -> entry.getValue() != null
                && entry.getKey() > baseRows).count();
        return baseRows - deletedBase + insertedLive;
    }

    /** Every row of the final state, base rows included, in key order (for small workloads and tests). */
    public List<Object[]> finalRows()
    {
        List<Object[]> rows = new ArrayList<>();
        for (long key = 1; key <= baseRows; key++) {
            if (!touched.containsKey(key)) {
                rows.add(columns.baseRow(key));
            }
        }
        for (Map.Entry<Long, Object[]> entry : touched.entrySet()) {
            if (entry.getValue() != null) {
                rows.add(entry.getValue());
            }
        }
        return rows;
    }

    /**
     * Creates {@code table} (without a key) holding exactly the final state: base rows in SQL, minus touched keys, plus
     * their final rows by COPY.
     */
    public void createExpected(BenchmarkDatabase database, String table)
            throws SQLException
    {
        database.execute("DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (" + columns.definitions(false)
                + ")");
        try (Connection connection = database.connect(false); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            if (baseRows > 0) {
                statement.execute(columns.baseRowsSql(table, 1, baseRows));
                statement.execute("CREATE TEMPORARY TABLE touched_keys (id bigint) ON COMMIT DROP");
                CopyLoader.copyIn(connection, CopyLoader.copyStatement("touched_keys", List.of("id"),
                        CopyFormat.DEFAULT), CopyFormat.DEFAULT, writer -> {
                    for (Long key : touched.keySet()) {
                        writer.writeLong(key);
                        writer.endRow();
                    }
                });
                statement.execute("DELETE FROM " + table + " t USING touched_keys k WHERE t.id = k.id");
            }
            List<Object[]> rows = new ArrayList<>(touched.size());
            for (Object[] row : touched.values()) {
                if (row != null) {
                    rows.add(row);
                }
            }
            columns.copyRows(connection, table, rows, 100_000);
            connection.commit();
        }
    }
}
