package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.BufferedSink;
import io.pgsink.core.ChangeEvent;
import io.pgsink.core.Operation;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableId;
import io.pgsink.core.TableSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A random 200k-event stream (inserts, repeated updates, deletes, key changes, a truncate) applied
 * in several flushes leaves the target equal, row by row, to a reference model that applies each
 * event in turn; and delivering the last 50k events a second time (at-least-once upstream) changes
 * nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RandomChangeStreamIT
{
    private static final int EVENTS = 200_000;
    private static final String[] TEXTS = {"", "plain", "comma,separated", "quote\"d", "new\nline", "\\. alone", "back\\slash", "ünïcødé 🚀", "tab\tx", "\r\ncrlf"};

    private TestingSchema schema;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.get().createSchema("stream");
        schema.execute("CREATE TABLE items (id bigint PRIMARY KEY, qty integer, label text, price numeric(12,2), active boolean)");
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        if (schema != null) {
            schema.close();
        }
    }

    @Test
    void targetEqualsReferenceModel()
            throws SQLException
    {
        Random random = new Random(20261123);
        TableSchema items = TableSchema.of(TableId.of("src", "items"), List.of("id", "qty", "label", "price", "active"), List.of("id"));
        TreeMap<Long, Object[]> model = new TreeMap<>();
        List<Long> keys = new ArrayList<>();
        long nextKey = 1;
        int truncateAt = EVENTS * 2 / 3;
        List<ChangeEvent> stream = new ArrayList<>(EVENTS);
        try (BufferedSink sink = TestingSink.sink(schema, Map.of(SinkConfig.FLUSH_MAX_EVENTS, "17000", SinkConfig.FLUSH_INTERVAL_MS, "3600000"))) {
            for (int i = 1; i <= EVENTS; i++) {
                SourcePosition position = new SourcePosition("src", String.valueOf(i));
                int dice = random.nextInt(100);
                ChangeEvent event;
                if (i == truncateAt) {
                    event = ChangeEvent.truncate(items.table(), position, 0);
                    model.clear();
                    keys.clear();
                }
                else if (keys.isEmpty() || dice < 40) {
                    long key = nextKey++;
                    Object[] row = randomRow(random, key);
                    event = ChangeEvent.insert(items, random.nextInt(10) == 0 ? Operation.READ : Operation.INSERT, row, position, 0);
                    model.put(key, row.clone());
                    keys.add(key);
                }
                else if (dice < 80) {
                    // updates concentrate on recent keys, so keys are updated repeatedly within a batch
                    long key = keys.get(Math.max(0, keys.size() - 1 - random.nextInt(Math.min(keys.size(), 2000))));
                    Object[] row = randomRow(random, key);
                    event = ChangeEvent.update(items, null, row, position, 0);
                    model.put(key, row.clone());
                }
                else if (dice < 92) {
                    int index = random.nextInt(keys.size());
                    long key = keys.get(index);
                    keys.set(index, keys.get(keys.size() - 1));
                    keys.remove(keys.size() - 1);
                    event = ChangeEvent.delete(items, new Object[] {key, null, null, null, null}, position, 0);
                    model.remove(key);
                }
                else {
                    int index = random.nextInt(keys.size());
                    long oldKey = keys.get(index);
                    long newKey = nextKey++;
                    keys.set(index, newKey);
                    Object[] row = randomRow(random, newKey);
                    event = ChangeEvent.update(items, new Object[] {oldKey, null, null, null, null}, row, position, 0);
                    model.remove(oldKey);
                    model.put(newKey, row.clone());
                }
                stream.add(event);
                sink.accept(event);
            }
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("src", new SourcePosition("src", String.valueOf(EVENTS)));
        }
        assertTargetEquals(model);

        // at-least-once upstream: the last 50k events arrive again, in other batch boundaries
        try (BufferedSink sink = TestingSink.sink(schema, Map.of(SinkConfig.FLUSH_MAX_EVENTS, "9000", SinkConfig.FLUSH_INTERVAL_MS, "3600000"))) {
            for (ChangeEvent event : stream.subList(EVENTS - 50_000, EVENTS)) {
                sink.accept(event);
            }
            sink.flush();
        }
        assertTargetEquals(model);
    }

    private void assertTargetEquals(TreeMap<Long, Object[]> model)
            throws SQLException
    {
        List<List<String>> expected = new ArrayList<>();
        for (Object[] row : model.values()) {
            expected.add(Arrays.asList(row[0].toString(), text(row[1]), text(row[2]), text(row[3]), row[4] == null ? null : row[4].toString()));
        }
        List<List<String>> actual = TestingSink.query(schema, "SELECT id::text, qty::text, label, price::text, active::text FROM items ORDER BY id");
        assertThat(actual).hasSize(expected.size());
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.get(i)).as("row %s", i).isEqualTo(expected.get(i));
        }
        assertThat(expected.size()).isGreaterThan(1000);
    }

    private static String text(Object value)
    {
        return value == null ? null : value instanceof BigDecimal decimal ? decimal.toPlainString() : value.toString();
    }

    private static Object[] randomRow(Random random, long key)
    {
        Integer qty = random.nextInt(20) == 0 ? null : random.nextInt();
        String label = random.nextInt(20) == 0 ? null : TEXTS[random.nextInt(TEXTS.length)] + random.nextInt(1000);
        BigDecimal price = random.nextInt(20) == 0 ? null : BigDecimal.valueOf(random.nextLong() % 10_000_000_000L, 2);
        Boolean active = random.nextInt(20) == 0 ? null : random.nextBoolean();
        return new Object[] {key, qty, label, price, active};
    }
}
