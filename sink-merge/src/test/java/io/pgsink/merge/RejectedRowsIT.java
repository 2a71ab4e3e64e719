package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.write.RowRejectedException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Rows the target refuses: with {@code errors.tolerance=none} the batch stops and nothing of it is
 * applied; with {@code all} each bad row is isolated, the good rows applied, and the bad ones
 * written to the dead-letter table with table, key, column, position and reason.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RejectedRowsIT
{
    private static final TableSchema ACCOUNTS = TableSchema.of(TableId.of("src", "accounts"), List.of("id", "code", "balance", "note"), List.of("id"));

    private TestingSchema schema;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("rejects");
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        if (schema != null) {
            schema.close();
        }
    }

    private static SourcePosition at(long offset)
    {
        return new SourcePosition("src", String.valueOf(offset));
    }

    private BufferedSink sink(String name, String tolerance)
    {
        SinkConfig config = TestingSink.config(schema, Map.of(SinkConfig.SINK_NAME, name, SinkConfig.ERRORS_TOLERANCE, tolerance, SinkConfig.TABLES_WITHOUT_KEY, "append-only"));
        return new BufferedSink(name, config.flushPolicy(), new MergeApplier(config), FlushListener.NONE, System::nanoTime, config.toleratesRejectedRows());
    }

    /** One batch with a bad row of every kind among good ones. */
    private void acceptMixedBatch(BufferedSink sink)
    {
        TableSchema log = TableSchema.of(TableId.of("src", "log"), List.of("message"), List.of());
        TableSchema docs = TableSchema.of(TableId.of("src", "docs"), List.of("id", "body", "n"), List.of("id"));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {1, "ok", 10, "good"}, at(1), 0));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {2, "toolong", 10, "value too long"}, at(2), 0));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {3, "ok", -5, "check constraint"}, at(3), 0));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {4, "ok", "lots", "type mismatch"}, at(4), 0));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {5, "ok", 10, "nul \u0000 byte"}, at(5), 0));
        sink.accept(ChangeEvent.update(ACCOUNTS, null, new Object[] {100, "ok", 99, "existing row updated"}, at(6), 0));
        sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {6, "ok", 10, "good too"}, at(7), 0));
        sink.accept(ChangeEvent.insert(log, new Object[] {"appended"}, at(8), 0));
        sink.accept(ChangeEvent.update(log, null, new Object[] {"update of a table without key"}, at(9), 0));
        // TOAST rows go through staging; their check violation surfaces in INSERT ... SELECT, without a row number
        sink.accept(ChangeEvent.update(docs, null, new Object[] {1, UnavailableValue.INSTANCE, 5}, at(10), 0));
        sink.accept(ChangeEvent.update(docs, null, new Object[] {2, UnavailableValue.INSTANCE, -1}, at(11), 0));
        sink.accept(ChangeEvent.update(docs, null, new Object[] {3, UnavailableValue.INSTANCE, 7}, at(12), 0));
    }

    private void createTables(String suffix)
            throws SQLException
    {
        schema.execute(
                "DROP TABLE IF EXISTS accounts, log, docs",
                "CREATE TABLE accounts (id int PRIMARY KEY, code varchar(3), balance int CHECK (balance >= 0), note text)",
                "INSERT INTO accounts VALUES (100, 'old', 1, 'before " + suffix + "')",
                "CREATE TABLE log (message text)",
                "CREATE TABLE docs (id int PRIMARY KEY, body text, n int CHECK (n > 0))",
                "INSERT INTO docs SELECT g, repeat('body', 1000), 1 FROM generate_series(1, 3) g");
    }

    @Test
    void toleranceNoneStopsAndAppliesNothing()
            throws SQLException
    {
        createTables("none");
        try (BufferedSink sink = sink("strict", "none")) {
            assertThatThrownBy(() -> acceptMixedBatch(sink))
                    .as("the buffer refuses the update of a table without key right away")
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("the table has no primary key");
        }
        try (BufferedSink sink = sink("strict", "none")) {
            sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {1, "ok", 10, "good"}, at(1), 0));
            sink.accept(ChangeEvent.insert(ACCOUNTS, new Object[] {2, "toolong", 10, "secret value"}, at(2), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(RowRejectedException.class)
                    .hasMessageContaining("key (2) column code")
                    .hasMessageContaining("at offset 2 of src")
                    .hasMessageContaining("value too long for type character varying(3)")
                    .hasMessageNotContaining("secret value")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA);
        }
        assertThat(TestingSink.query(schema, "SELECT id FROM accounts ORDER BY id")).containsExactly(List.of("100"));
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM pgsink_offsets WHERE sink_name = 'strict'")).containsExactly(List.of("0"));
    }

    /** Under {@code none} too, every kind of refused row is named: table, key, column where the server says which, position, reason; never the value. */
    @Test
    void toleranceNoneNamesTheRowOfEveryKind()
            throws SQLException
    {
        TableSchema cards = TableSchema.of(TableId.of("src", "cards"), List.of("id", "code", "n", "holder"), List.of("id"));
        String[][] kinds = {
                // kind, the values of row 2 (row 1 is good), what the message names
                {"check violation", "ok", "-5", "violates check constraint \"cards_n_check\" [SQLState 23514]"},
                {"value too long", "secret-too-long", "5", "column code (from \"src\".\"cards\" at offset 2 of src): value too long for type character varying(8) [SQLState 22001]"},
                {"type refusal", "ok", "secret-not-a-number", "column n (from \"src\".\"cards\" at offset 2 of src): invalid input syntax for type integer [SQLState 22P02]"},
                {"not-null violation", null, "5", "column code (from \"src\".\"cards\" at offset 2 of src): null value in column \"code\" of relation \"cards\" violates not-null constraint [SQLState 23502]"},
                {"unique violation", "ok", "5", "duplicate key value violates unique constraint \"cards_holder_key\" [SQLState 23505]"},
        };
        for (String[] kind : kinds) {
            schema.execute(
                    "DROP TABLE IF EXISTS cards",
                    "CREATE TABLE cards (id int PRIMARY KEY, code varchar(8) NOT NULL, n int CHECK (n > 0), holder text UNIQUE)");
            try (BufferedSink sink = sink("strict_kinds", "none")) {
                sink.accept(ChangeEvent.insert(cards, new Object[] {1, "ok", 1, "secret-dup"}, at(1), 0));
                sink.accept(ChangeEvent.insert(cards, new Object[] {2, kind[1], kind[2], kind[0].equals("unique violation") ? "secret-dup" : "secret-holder"}, at(2), 0));
                sink.accept(ChangeEvent.insert(cards, new Object[] {3, "ok", 3, "secret-other"}, at(3), 0));
                assertThatThrownBy(sink::flush)
                        .as(kind[0])
                        .isInstanceOf(SinkException.class)
                        .hasMessageStartingWith("Cannot write a row of ")
                        .hasMessageContaining(".\"cards\" key (2)")
                        .hasMessageContaining("at offset 2 of src")
                        .hasMessageContaining(kind[3])
                        .hasMessageNotContaining("secret")
                        .satisfies(e -> assertThat(((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA))
                        .satisfies(e -> {
                            for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
                                assertThat(cause.getMessage()).as("%s: the cause %s", kind[0], cause.getClass()).doesNotContain("secret");
                            }
                        });
            }
            assertThat(TestingSink.query(schema, "SELECT count(*) FROM cards")).as(kind[0]).containsExactly(List.of("0"));
        }
    }

    @Test
    void toleranceAllAppliesGoodRowsAndDeadLettersBadOnes()
            throws SQLException
    {
        createTables("all");
        try (BufferedSink sink = sink("lenient", "all")) {
            acceptMixedBatch(sink);
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("src", at(12));
        }
        assertThat(TestingSink.query(schema, "SELECT id, note FROM accounts ORDER BY id")).containsExactly(
                List.of("1", "good"), List.of("6", "good too"), List.of("100", "existing row updated"));
        assertThat(TestingSink.query(schema, "SELECT message FROM log")).containsExactly(List.of("appended"));
        assertThat(TestingSink.query(schema, "SELECT id, n, length(body) FROM docs ORDER BY id")).containsExactly(
                List.of("1", "5", "4000"), List.of("2", "1", "4000"), List.of("3", "7", "4000"));

        List<List<String>> dead = TestingSink.query(schema, "SELECT target_table, row_key, source_offset, column_name, reason, row_values FROM pgsink_dead_letters"
                + " WHERE sink_name = 'lenient' ORDER BY source_offset::int");
        assertThat(dead).extracting(row -> row.get(1) + "@" + row.get(2)).containsExactly(
                "(2)@2", "(3)@3", "(4)@4", "(5)@5", "()@9", "(2)@11");
        assertThat(dead.get(0)).containsSubsequence("code", "value too long for type character varying(3) [SQLState 22001]");
        assertThat(dead.get(1).get(4)).contains("check constraint").contains("23514");
        assertThat(dead.get(2).get(4)).contains("invalid input syntax for type integer");
        assertThat(dead.get(3).get(3)).isEqualTo("note (text)");
        assertThat(dead.get(3).get(4)).contains("NUL");
        assertThat(dead.get(4).get(4)).contains("no primary key");
        assertThat(dead.get(5).get(0)).endsWith(".\"docs\"");
        assertThat(dead.get(5).get(4)).contains("check constraint");
        assertThat(dead.get(0).get(5)).isEqualTo("{\"id\": \"2\", \"code\": \"toolong\", \"balance\": \"10\", \"note\": \"value too long\"}");
        assertThat(dead.get(3).get(5)).contains("nul \\u0000 byte");
    }

    @Test
    void tooManyRejectedRowsStopTheSink()
            throws SQLException
    {
        createTables("many");
        schema.execute("ALTER TABLE accounts ADD CONSTRAINT nothing_fits CHECK (false) NOT VALID");
        List<Object[]> rows = new ArrayList<>();
        try (BufferedSink sink = sink("hopeless", "all")) {
            for (int i = 1; i <= 150; i++) {
                Object[] row = {i, "ok", 1, "row " + i};
                rows.add(row);
                sink.accept(ChangeEvent.insert(ACCOUNTS, row, at(i), 0));
            }
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("Gave up applying a batch of 150 events after the target refused 101 rows")
                    .hasMessageContaining("nothing_fits");
        }
        assertThat(rows).hasSize(150);
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM accounts")).containsExactly(Arrays.asList("1"));
    }
}
