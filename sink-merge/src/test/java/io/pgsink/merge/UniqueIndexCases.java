package io.pgsink.merge;

import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.write.TableWriter;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Valid source transactions apply whatever unique indexes the target has beyond its primary key:
 * a transaction that swaps or rotates unique values leaves, after merge by key, final rows that an
 * update in place ({@code MERGE}, {@code ON CONFLICT DO UPDATE}) checks one at a time against rows
 * not yet updated. On every target of the merge suite ({@link AbstractMergeTest} implements it),
 * under {@code errors.tolerance} {@code none} and {@code all}: the target ends as the source, and
 * no row goes to the dead letters.
 *
 * <p>Tables are keyed and distributed by {@code tenant}, which every unique index holds, as
 * Greenplum requires of a unique index.
 */
interface UniqueIndexCases
{
    String COLUMNS = "tenant int, id int, email text NOT NULL, n int, PRIMARY KEY (tenant, id)";

    TestingSchema suiteSchema();

    BufferedSink suiteSink(Map<String, String> overrides);

    /**
     * Creates {@code name} with {@code definitions}, distributed by {@code distributedBy} where the
     * target distributes tables.
     */
    void suiteTable(String name, String definitions, String distributedBy)
            throws SQLException;

    private static SourcePosition position(long lsn)
    {
        return new SourcePosition("{\"server\":\"src\"}", "{\"lsn\":" + lsn + "}");
    }

    private static TableSchema source(String table)
    {
        return TableSchema.of(TableId.of("src", table), List.of("tenant", "id", "email", "n"), List.of("tenant", "id"));
    }

    /**
     * A table of {@link #COLUMNS} with {@code more} definitions, named after the case and the
     * tolerance, and rows (1, id, email) for {@code emails}.
     */
    private String table(String name, String tolerance, String more, String... emails)
            throws SQLException
    {
        String table = name + "_" + tolerance;
        suiteTable(table, COLUMNS + more, "tenant");
        for (int i = 0; i < emails.length; i++) {
            suiteSchema().execute("INSERT INTO " + table + " VALUES (1, " + (i + 1) + ", '" + emails[i] + "', 0)");
        }
        return table;
    }

    /** Applies the events {@code events} gives in one flush, and checks that no row was dead-lettered. */
    private void apply(String table, String tolerance, Consumer<Events> events)
            throws SQLException
    {
        try (BufferedSink sink = sink(table, tolerance)) {
            events.accept(new Events(sink, source(table)));
            sink.flush();
        }
        assertThat(deadLetters(table)).as("dead letters of %s", table).isZero();
    }

    /** A sink named after the table. */
    private BufferedSink sink(String table, String tolerance)
    {
        return suiteSink(Map.of(SinkConfig.SINK_NAME, table, SinkConfig.ERRORS_TOLERANCE, tolerance));
    }

    private long deadLetters(String sinkName)
            throws SQLException
    {
        String absent = TestingSink.query(suiteSchema(), "SELECT to_regclass('pgsink_dead_letters') IS NULL")
                .get(0).get(0);
        if (absent.equals("t")) {
            return 0;
        }
        return deadLetterRows(sinkName).size();
    }

    private List<List<String>> deadLetterRows(String sinkName)
            throws SQLException
    {
        return TestingSink.query(suiteSchema(), "SELECT row_key, reason FROM pgsink_dead_letters WHERE sink_name = '"
                + sinkName + "'");
    }

    private List<List<String>> rows(String table)
            throws SQLException
    {
        return TestingSink.query(suiteSchema(), "SELECT id::text AS id_text, email FROM " + table + " ORDER BY id");
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void swapOfUniqueValuesApplies(String tolerance)
            throws SQLException
    {
        String table = table("u_swap", tolerance, ", UNIQUE (tenant, email)", "a", "b");
        apply(table, tolerance, events -> events.update(1, "tmp").update(2, "a").update(1, "b"));
        assertThat(rows(table)).containsExactly(List.of("1", "b"), List.of("2", "a"));
    }

    /** 10 rows fit every small batch ({@code SmallBatchWriter}); 300 exceed {@link TableWriter#SMALL_BATCH_CHANGES}. */
    @ParameterizedTest
    @ValueSource(strings = {"none-10", "all-10", "none-300", "all-300"})
    default void rotationOfUniqueValuesApplies(String toleranceAndRows)
            throws SQLException
    {
        String tolerance = toleranceAndRows.substring(0, toleranceAndRows.indexOf('-'));
        int count = Integer.parseInt(toleranceAndRows.substring(toleranceAndRows.indexOf('-') + 1));
        String[] emails = new String[count];
        for (int i = 0; i < count; i++) {
            emails[i] = "e" + (i + 1);
        }
        String table = table("u_rotate" + count, tolerance, ", UNIQUE (tenant, email)", emails);
        apply(table, tolerance, events -> {
            // each row takes the value the one before it gave up
            events.update(1, "tmp");
            for (int id = 2; id <= count; id++) {
                events.update(id, "e" + (id - 1));
            }
            events.update(1, "e" + count);
        });
        List<List<String>> expected = new ArrayList<>();
        expected.add(List.of("1", "e" + count));
        for (int id = 2; id <= count; id++) {
            expected.add(List.of(String.valueOf(id), "e" + (id - 1)));
        }
        assertThat(rows(table)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void cycleWithDeleteAndReinsertApplies(String tolerance)
            throws SQLException
    {
        String table = table("u_cycle", tolerance, ", UNIQUE (tenant, email)", "a", "b", "c", "d");
        apply(table, tolerance, events -> events
                // key 1 leaves and comes back with the value key 3 gave up: a 3-cycle over a delete and a re-insert
                .delete(1).update(2, "a").update(3, "b").insert(1, "c")
                // a fresh key takes the value of a deleted one
                .delete(4).insert(5, "d"));
        assertThat(rows(table)).containsExactly(List.of("1", "c"), List.of("2", "a"), List.of("3", "b"),
                List.of("5", "d"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void swapUnderCompositeUniqueConstraintApplies(String tolerance)
            throws SQLException
    {
        String table = table("u_composite", tolerance, ", UNIQUE (tenant, email, n)", "a", "b");
        suiteSchema().execute("UPDATE " + table + " SET email = 'same', n = id");
        apply(table, tolerance, events -> events.update(1, "same", 9).update(2, "same", 1).update(1, "same", 2));
        assertThat(TestingSink.query(suiteSchema(), "SELECT id::text AS id_text, email, n::text FROM " + table
                + " ORDER BY id"))
                .containsExactly(List.of("1", "same", "2"), List.of("2", "same", "1"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void swapUnderPartialUniqueIndexApplies(String tolerance)
            throws SQLException
    {
        String table = table("u_partial", tolerance, "", "a", "b", "a");
        // only rows with a positive n must be unique: row 3 shares row 1's value
        suiteSchema().execute("UPDATE " + table + " SET n = CASE id WHEN 3 THEN 0 ELSE 1 END",
                "CREATE UNIQUE INDEX " + table + "_active ON " + table + " (tenant, email) WHERE n > 0");
        apply(table, tolerance, events -> events.update(1, "tmp", 1).update(2, "a", 1).update(1, "b", 1));
        assertThat(rows(table)).containsExactly(List.of("1", "b"), List.of("2", "a"), List.of("3", "a"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void swapUnderExpressionUniqueIndexApplies(String tolerance)
            throws SQLException
    {
        String table = table("u_expression", tolerance, "", "A", "b");
        suiteSchema().execute("CREATE UNIQUE INDEX " + table + "_lower ON " + table + " (tenant, lower(email))");
        apply(table, tolerance, events -> events.update(1, "tmp").update(2, "a").update(1, "B"));
        assertThat(rows(table)).containsExactly(List.of("1", "B"), List.of("2", "a"));
    }

    /** Unchanged TOAST values of swapped rows are filled from the target before their keys are deleted. */
    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void swapWithUnchangedToastValuesApplies(String tolerance)
            throws SQLException
    {
        String table = "u_toast_" + tolerance;
        suiteTable(table, "tenant int, id int, email text NOT NULL, body text, PRIMARY KEY (tenant, id),"
                + " UNIQUE (tenant, email)", "tenant");
        suiteSchema().execute("INSERT INTO " + table + " VALUES (1, 1, 'a', repeat('x', 100000)),"
                + " (1, 2, 'b', repeat('y', 100000))");
        TableSchema source = TableSchema.of(TableId.of("src", table), List.of("tenant", "id", "email", "body"),
                List.of("tenant", "id"));
        Object unchanged = UnavailableValue.INSTANCE;
        try (BufferedSink sink = sink(table, tolerance)) {
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, 1, "tmp", unchanged}, position(1), 0));
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, 2, "a", unchanged}, position(2), 0));
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, 1, "b", unchanged}, position(3), 0));
            sink.flush();
        }
        assertThat(deadLetters(table)).isZero();
        String rows = "SELECT id::text AS id_text, email, left(body, 1), length(body)::text FROM " + table
                + " ORDER BY id";
        assertThat(TestingSink.query(suiteSchema(), rows))
                .containsExactly(List.of("1", "b", "x", "100000"), List.of("2", "a", "y", "100000"));
    }

    /**
     * A row that collides with a target row the batch does not touch is refused on its own: the
     * failure names table, key and index, and says what to do, without the value; under
     * {@code all} only that row goes to the dead letters.
     */
    @ParameterizedTest
    @ValueSource(strings = {"none", "all"})
    default void rowCollidingWithAnUntouchedRowIsRefusedNamingTheIndex(String tolerance)
            throws SQLException
    {
        String constraint = ", CONSTRAINT u_collide_" + tolerance + "_email UNIQUE (tenant, email)";
        String table = table("u_collide", tolerance, constraint, "a", "b", "secret");
        // the source never had key 3: the target holds a row of its own
        Consumer<Events> events = batch -> batch.update(1, "b2").update(2, "b").insert(4, "secret");
        if (tolerance.equals("none")) {
            try (BufferedSink sink = sink(table, tolerance)) {
                events.accept(new Events(sink, source(table)));
                assertThatThrownBy(sink::flush)
                        .isInstanceOf(SinkException.class)
                        .hasMessageContaining(table)
                        .hasMessageContaining("key (1, 4)")
                        .hasMessageContaining("\"" + table + "_email\"")
                        .hasMessageContaining("in this index beyond the primary key")
                        .hasMessageNotContaining("secret");
            }
            assertThat(rows(table)).containsExactly(List.of("1", "a"), List.of("2", "b"), List.of("3", "secret"));
            return;
        }
        try (BufferedSink sink = sink(table, tolerance)) {
            events.accept(new Events(sink, source(table)));
            sink.flush();
        }
        assertThat(rows(table)).containsExactly(List.of("1", "b2"), List.of("2", "b"), List.of("3", "secret"));
        assertThat(deadLetterRows(table))
                .singleElement()
                .satisfies(row -> assertThat(row.get(0)).isEqualTo("(1, 4)"))
                .satisfies(row -> assertThat(row.get(1)).contains("\"" + table + "_email\"").doesNotContain("secret"));
    }

    /** The events of one source transaction, all of tenant 1. */
    final class Events
    {
        private final BufferedSink sink;
        private final TableSchema schema;
        private long lsn;

        Events(BufferedSink sink, TableSchema schema)
        {
            this.sink = sink;
            this.schema = schema;
        }

        Events update(int id, String email)
        {
            return update(id, email, 0);
        }

        Events update(int id, String email, int n)
        {
            sink.accept(ChangeEvent.update(schema, null, new Object[] {1, id, email, n}, position(++lsn), 0));
            return this;
        }

        Events insert(int id, String email)
        {
            sink.accept(ChangeEvent.insert(schema, new Object[] {1, id, email, 0}, position(++lsn), 0));
            return this;
        }

        Events delete(int id)
        {
            sink.accept(ChangeEvent.delete(schema, new Object[] {1, id, null, null}, position(++lsn), 0));
            return this;
        }
    }
}
