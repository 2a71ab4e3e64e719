package io.pgsink.bench;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

/**
 * A reproducible change stream over an orders-like table {@code (id bigint PRIMARY KEY, qty
 * integer, label text, price numeric(12,2), active boolean)}, with the final state it must leave.
 *
 * <ul>
 * <li>S1: {@code events} inserts of new keys into an empty table.</li>
 * <li>S2: {@code events} changes against a table of {@code baseRows} rows: 50% inserts of new keys,
 *     35% updates (a third of them of keys updated shortly before, so keys repeat within a batch),
 *     15% deletes.</li>
 * </ul>
 */
final class Workload
{
    enum Kind
    {
        INSERT, UPDATE, DELETE
    }

    /** One change; {@code row} is null for a delete. */
    record Change(Kind kind, long key, Object[] row) {}

    final String name;
    final long baseRows;
    final List<Change> changes;
    final TreeMap<Long, Object[]> finalState;

    private Workload(String name, long baseRows, List<Change> changes, TreeMap<Long, Object[]> finalState)
    {
        this.name = name;
        this.baseRows = baseRows;
        this.changes = changes;
        this.finalState = finalState;
    }

    static final String COLUMNS = "id bigint PRIMARY KEY, qty integer, label text, price numeric(12,2), active boolean";
    static final String COLUMNS_WITHOUT_KEY = "id bigint, qty integer, label text, price numeric(12,2), active boolean";
    static final List<String> COLUMN_NAMES = List.of("id", "qty", "label", "price", "active");

    /** The row every base key starts with; the same formula as {@link #baseRowsSql}. */
    static Object[] baseRow(long key)
    {
        return new Object[] {key, (int) (key % 1000), "base label " + key, BigDecimal.valueOf(key % 100_000, 2), key % 2 == 0};
    }

    static String baseRowsSql(String table, long rows)
    {
        return "INSERT INTO " + table + " SELECT g, (g % 1000)::int, 'base label ' || g, ((g % 100000) / 100.0)::numeric(12,2), g % 2 = 0 FROM generate_series(1, " + rows + ") g";
    }

    static Workload inserts(long events, long seed)
    {
        Random random = new Random(seed);
        List<Change> changes = new ArrayList<>((int) events);
        TreeMap<Long, Object[]> state = new TreeMap<>();
        for (long key = 1; key <= events; key++) {
            Object[] row = randomRow(random, key);
            changes.add(new Change(Kind.INSERT, key, row));
            state.put(key, row);
        }
        return new Workload("S1 inserts", 0, changes, state);
    }

    static Workload mixed(long events, long baseRows, long seed)
    {
        Random random = new Random(seed);
        List<Change> changes = new ArrayList<>((int) events);
        TreeMap<Long, Object[]> state = new TreeMap<>();
        // live keys in an array for O(1) random picks and removals
        long[] live = new long[(int) (baseRows + events)];
        int liveCount = 0;
        for (long key = 1; key <= baseRows; key++) {
            state.put(key, baseRow(key));
            live[liveCount++] = key;
        }
        long nextKey = baseRows + 1;
        for (long i = 0; i < events; i++) {
            int dice = random.nextInt(100);
            if (dice < 50 || liveCount == 0) {
                long key = nextKey++;
                Object[] row = randomRow(random, key);
                changes.add(new Change(Kind.INSERT, key, row));
                state.put(key, row);
                live[liveCount++] = key;
            }
            else if (dice < 85) {
                int index = random.nextInt(3) == 0
                        ? liveCount - 1 - random.nextInt(Math.min(liveCount, 5_000))
                        : random.nextInt(liveCount);
                long key = live[index];
                Object[] row = randomRow(random, key);
                changes.add(new Change(Kind.UPDATE, key, row));
                state.put(key, row);
            }
            else {
                int index = random.nextInt(liveCount);
                long key = live[index];
                live[index] = live[--liveCount];
                changes.add(new Change(Kind.DELETE, key, null));
                state.remove(key);
            }
        }
        return new Workload("S2 mixed", baseRows, changes, state);
    }

    private static Object[] randomRow(Random random, long key)
    {
        return new Object[] {
                key,
                random.nextInt(1_000_000),
                "label " + Long.toString(random.nextLong() & Long.MAX_VALUE, 36) + (random.nextInt(10) == 0 ? ", with \"quotes\"" : ""),
                BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2),
                random.nextBoolean()};
    }
}
