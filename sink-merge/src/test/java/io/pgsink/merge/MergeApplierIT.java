package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.schema.TargetCatalog;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.write.TableWriter;
import org.awaitility.Awaitility;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The merge suite ({@link AbstractMergeTest}) on PostgreSQL, and how errors read there. */
class MergeApplierIT
        extends AbstractMergeTest
{
    @Override
    protected TestingPostgreSqlServer server()
    {
        return TestingPostgreSqlServer.target();
    }

    @Override
    protected Dialect expectedDialect()
    {
        return Dialect.POSTGRESQL;
    }

    /**
     * {@code flush.small.batch.max.events} of the suite's sinks: 0 here, so that every batch of the
     * suite takes the COPY path; {@link SmallBatchOnPostgreSqlIT} runs it on the small-batch path.
     */
    protected String smallBatchMaxEvents()
    {
        return "0";
    }

    @Override
    protected Map<String, String> targetProperties()
    {
        return Map.of(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, smallBatchMaxEvents());
    }

    /**
     * Whether the sink may update the tables and the server has {@code MERGE} (PostgreSQL 15+), so
     * that flushes merge changes to existing keys in place; before 15 they delete and insert.
     */
    protected boolean updatesInPlace()
    {
        return server().majorVersion() >= 15;
    }

    /**
     * Which unique indexes beyond the primary key the catalog reports ({@link TargetTable#uniqueIndexes}),
     * and that they, and only they, turn a table's plan from {@code MERGE} to delete-insert
     * ({@link TablePlan#mergeable}): a table with only its key keeps today's statements.
     */
    @Test
    void onlyUniqueIndexesBeyondTheKeyTurnMergeIntoDeleteAndInsert()
            throws SQLException
    {
        String columns = "tenant int, id int, email text, span int4range, PRIMARY KEY (tenant, id)";
        schema.execute(
                "CREATE TABLE ux_key_only (" + columns + ")",
                "CREATE INDEX ux_key_only_email ON ux_key_only (email)",
                "CREATE TABLE ux_with_key (" + columns + ", CONSTRAINT ux_with_key_email UNIQUE (email, id, tenant))",
                "CREATE TABLE ux_deferred (" + columns + ", CONSTRAINT ux_deferred_email UNIQUE (email) DEFERRABLE)",
                "CREATE TABLE ux_plain (" + columns + ", CONSTRAINT ux_plain_email UNIQUE (tenant, email))",
                "CREATE TABLE ux_partial (" + columns + ")",
                "CREATE UNIQUE INDEX ux_partial_email ON ux_partial (email) WHERE id > 0",
                "CREATE TABLE ux_expression (" + columns + ")",
                "CREATE UNIQUE INDEX ux_expression_email ON ux_expression (lower(email))",
                // an expression over a key column does not hold the key column itself
                "CREATE UNIQUE INDEX ux_expression_id ON ux_expression ((id + 1), tenant)",
                "CREATE TABLE ux_excluded (" + columns + ", EXCLUDE USING gist (span WITH &&))",
                "CREATE TABLE ux_two (" + columns + ", CONSTRAINT ux_two_b UNIQUE (email, tenant), UNIQUE (span))");
        Map<String, List<String>> expected = new LinkedHashMap<>();
        // none that rows of distinct keys can violate: it holds every key column, or is checked per statement
        expected.put("ux_key_only", List.of());
        expected.put("ux_with_key", List.of());
        expected.put("ux_deferred", List.of());
        expected.put("ux_plain", List.of("ux_plain_email"));
        expected.put("ux_partial", List.of("ux_partial_email"));
        expected.put("ux_expression", List.of("ux_expression_email", "ux_expression_id"));
        expected.put("ux_excluded", List.of("ux_excluded_span_excl"));
        expected.put("ux_two", List.of("ux_two_b", "ux_two_span_key"));
        SinkConfig config = TestingSink.config(schema, Map.of());
        for (Map.Entry<String, List<String>> table : expected.entrySet()) {
            TableId id = TableId.of(schema.name(), table.getKey());
            TargetTable target;
            try (Connection connection = schema.connect()) {
                target = TargetCatalog.read(connection, id, Dialect.POSTGRESQL).orElseThrow();
            }
            assertThat(target.uniqueIndexes()).as(table.getKey()).isEqualTo(table.getValue());
            List<String> sourceColumns = List.of("tenant", "id", "email", "span");
            TableSchema source = TableSchema.of(TableId.of("src", table.getKey()), sourceColumns,
                    List.of("tenant", "id"));
            TablePlan plan = TablePlan.create(source, target, Dialect.POSTGRESQL, config.copyFormat(), false, "stage");
            assertThat(plan.mergeable).as(table.getKey()).isEqualTo(table.getValue().isEmpty());
            assertThat(plan.upsertable()).as(table.getKey()).isEqualTo(table.getValue().isEmpty());
            // the MERGE itself, for the tables that keep it, is today's statement
            assertThat(plan.merge).as(table.getKey())
                    .isEqualTo(Statements.mergeFromStaging(target, plan.columns, "stage"));
        }
    }

    /**
     * A {@code DEFERRABLE} unique constraint is checked at the end of the statement, not row by row,
     * so it leaves the table's plan as it was ({@code MERGE} where the suite merges), and a swap applies.
     */
    @Test
    void swapUnderDeferrableUniqueConstraintApplies()
            throws SQLException
    {
        schema.execute("CREATE TABLE u_deferred (id int PRIMARY KEY, email text NOT NULL,"
                        + " CONSTRAINT u_deferred_email UNIQUE (email) DEFERRABLE)",
                "INSERT INTO u_deferred VALUES (1, 'a'), (2, 'b')");
        tableCreated("u_deferred");
        TableSchema source = TableSchema.of(TableId.of("src", "u_deferred"), List.of("id", "email"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, "tmp"}, at(1), 0));
            sink.accept(ChangeEvent.update(source, null, new Object[] {2, "a"}, at(2), 0));
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, "b"}, at(3), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, email FROM u_deferred ORDER BY id"))
                .containsExactly(List.of("1", "b"), List.of("2", "a"));
    }

    @Test
    void existingKeysAreRewrittenWhole()
            throws Exception
    {
        schema.execute("CREATE TABLE rewritten (id int PRIMARY KEY, v text, extra text DEFAULT 'default', len int GENERATED ALWAYS AS (length(v)) STORED)",
                "INSERT INTO rewritten (id, v, extra) VALUES (1, 'a', 'set by hand'), (2, 'b', 'set by hand'), (3, 'c', 'kept')");
        TableSchema source = TableSchema.of(TableId.of("src", "rewritten"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, "updated"}, at(1), 0));
            sink.accept(ChangeEvent.delete(source, new Object[] {2, null}, at(2), 0));
            sink.accept(ChangeEvent.insert(source, new Object[] {4, "new"}, at(3), 0));
            // an update of a key the target never had, and a delete of one it does not have
            sink.accept(ChangeEvent.update(source, null, new Object[] {5, "never inserted"}, at(4), 0));
            sink.accept(ChangeEvent.delete(source, new Object[] {6, null}, at(5), 0));
            sink.flush();
        }
        // the columns the source lacks read as after a delete and an insert, however the row was written
        assertThat(TestingSink.query(schema, "SELECT id, v, extra, len FROM rewritten ORDER BY id")).containsExactly(
                List.of("1", "updated", "default", "7"),
                List.of("3", "c", "kept", "1"),
                List.of("4", "new", "default", "3"),
                List.of("5", "never inserted", "default", "14"));

        // key 1 updated in place, key 2 deleted; or both deleted (and key 1 inserted again)
        assertThat(updatedAndDeleted("rewritten", 2)).isEqualTo(updatesInPlace() ? List.of("1", "1") : List.of("0", "2"));
    }

    /** What the connection does when the sink commits a batch. */
    private enum OnCommit
    {
        COMMIT, COMMIT_THEN_LOSE_CONNECTION, LOSE_CONNECTION
    }

    @Test
    void connectionLostDuringCommitIsSettledByAskingTheServer()
            throws SQLException
    {
        // a table without key: applying a committed batch again would duplicate its rows
        schema.execute("CREATE TABLE ledger (entry int, note text)");
        TableSchema ledger = TableSchema.of(TableId.of("src", "ledger"), List.of("entry", "note"), List.of());
        SinkConfig config = config(Map.of(SinkConfig.TABLES_WITHOUT_KEY, "append-only"));
        TargetConnector real = connector(config);
        AtomicReference<OnCommit> onCommit = new AtomicReference<>(OnCommit.COMMIT);
        TargetConnector losing = () -> losingConnectionOnCommit(real.connect(), onCommit, new AtomicInteger());
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config, losing))) {
            sink.accept(ChangeEvent.insert(ledger, new Object[] {1, "first"}, at(1), 0));
            sink.flush();

            // the server committed, but the answer was lost with the connection
            onCommit.set(OnCommit.COMMIT_THEN_LOSE_CONNECTION);
            sink.accept(ChangeEvent.insert(ledger, new Object[] {2, "second"}, at(2), 0));
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("{\"server\":\"src\"}", at(2));

            // the connection was lost before the server committed: the flush fails, to be retried
            onCommit.set(OnCommit.LOSE_CONNECTION);
            sink.accept(ChangeEvent.insert(ledger, new Object[] {3, "third"}, at(3), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.TRANSIENT);
            onCommit.set(OnCommit.COMMIT);
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("{\"server\":\"src\"}", at(3));
        }
        assertThat(TestingSink.query(schema, "SELECT entry, note FROM ledger ORDER BY entry"))
                .containsExactly(List.of("1", "first"), List.of("2", "second"), List.of("3", "third"));
    }

    @ParameterizedTest(name = "flush.small.batch.max.events={0}")
    @ValueSource(strings = {"0", "1000"})
    void connectionLostDuringMergeWithCommitIsSettledByAskingTheServer(String smallBatchMaxEvents)
            throws SQLException
    {
        String table = "counted_writes_" + smallBatchMaxEvents;
        // every row written counted by a trigger: applying a committed batch again would count its rows twice
        createTable(table, "id int PRIMARY KEY, v text");
        String writes = schema.name() + ".writes_" + smallBatchMaxEvents;
        String function = schema.name() + ".count_write_" + smallBatchMaxEvents + "()";
        schema.execute("CREATE TABLE " + writes + " (id int)",
                "CREATE FUNCTION " + function + " RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO " + writes
                        + " VALUES (NEW.id); RETURN NEW; END $$",
                "CREATE TRIGGER counted AFTER INSERT OR UPDATE ON " + table + " FOR EACH ROW EXECUTE FUNCTION " + function,
                "INSERT INTO " + table + " SELECT i, 'base' FROM generate_series(1, 300) i", "TRUNCATE " + writes);
        TableSchema counted = TableSchema.of(TableId.of("src", table), List.of("id", "v"), List.of("id"));
        // the COPY path, which stages the changes and sends the MERGE with the COMMIT, or the bound statement with it
        SinkConfig config = config(Map.of(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, smallBatchMaxEvents));
        TargetConnector real = connector(config);
        AtomicReference<OnCommit> onCommit = new AtomicReference<>(OnCommit.COMMIT);
        AtomicInteger withCommit = new AtomicInteger();
        TargetConnector losing = () -> losingConnectionOnCommit(real.connect(), onCommit, withCommit);
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config, losing))) {
            updateAll(sink, counted, "first", 1);

            // the server committed, but the answer was lost with the connection
            onCommit.set(OnCommit.COMMIT_THEN_LOSE_CONNECTION);
            updateAll(sink, counted, "second", 2);
            assertThat(sink.committedPositions()).containsEntry("{\"server\":\"src\"}", at(2));

            // the connection was lost before the server committed: the flush fails, to be retried
            onCommit.set(OnCommit.LOSE_CONNECTION);
            assertThatThrownBy(() -> updateAll(sink, counted, "third", 3))
                    .isInstanceOf(SinkException.class)
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.TRANSIENT);
            onCommit.set(OnCommit.COMMIT);
            sink.flush();
            assertThat(sink.committedPositions()).containsEntry("{\"server\":\"src\"}", at(3));
        }
        // deleting and inserting through COPY, the COPY of the final rows comes last, and COMMIT alone
        assertThat(withCommit.get()).isEqualTo(updatesInPlace() || !smallBatchMaxEvents.equals("0") ? 4 : 0);
        assertThat(TestingSink.query(schema, "SELECT count(*), count(DISTINCT id) FROM " + writes)).containsExactly(List.of("900", "300"));
        assertThat(TestingSink.query(schema, "SELECT v, count(*) FROM " + table + " GROUP BY v")).containsExactly(List.of("third", "300"));
    }

    /** Updates every row of {@code counted} to {@code v} at position {@code offset}, and flushes. */
    private static void updateAll(BufferedSink sink, TableSchema counted, String v, long offset)
    {
        for (int id = 1; id <= 300; id++) {
            sink.accept(ChangeEvent.update(counted, null, new Object[] {id, v}, at(offset), 0));
        }
        sink.flush();
    }

    /**
     * The connection, doing what {@code onCommit} says when a transaction that stored positions
     * commits (and once only), alone or with its last statement: losing the connection closes it,
     * which makes the server roll back what it did not commit yet, and fails as a lost connection does.
     * {@code withCommit} counts the statements sent with their transaction's COMMIT.
     */
    private static Connection losingConnectionOnCommit(Connection connection, AtomicReference<OnCommit> onCommit, AtomicInteger withCommit)
    {
        AtomicBoolean positionsStored = new AtomicBoolean();
        return proxy(Connection.class, connection, (method, arguments) -> {
            if (method.getName().equals("prepareStatement") && arguments[0] instanceof String sql && sql.contains("RETURNING txid_current()")) {
                positionsStored.set(true);
            }
            if (method.getName().equals("prepareStatement") && arguments[0] instanceof String sql && sql.endsWith("; COMMIT")
                    && positionsStored.getAndSet(false)) {
                withCommit.incrementAndGet();
                PreparedStatement statement = connection.prepareStatement(sql);
                OnCommit action = onCommit.getAndSet(OnCommit.COMMIT);
                return proxy(PreparedStatement.class, statement, (statementMethod, statementArguments) -> {
                    if (statementMethod.getName().equals("execute")) {
                        act(action, connection, () -> statement.execute());
                    }
                    return null;
                });
            }
            if (method.getName().equals("commit") && positionsStored.getAndSet(false)) {
                act(onCommit.getAndSet(OnCommit.COMMIT), connection, connection::commit);
            }
            return null;
        });
    }

    /** Commits ({@code commit}) and loses the connection, or loses it only, as {@code action} says; nothing for COMMIT. */
    private static void act(OnCommit action, Connection connection, Commit commit)
            throws SQLException
    {
        if (action != OnCommit.COMMIT) {
            if (action == OnCommit.COMMIT_THEN_LOSE_CONNECTION) {
                commit.run();
            }
            connection.close();
            throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
        }
    }

    /** How the connection commits: {@code COMMIT} alone, or with the last statement. */
    private interface Commit
    {
        void run()
                throws SQLException;
    }

    /** What a proxy does before a call reaches the object: returns the result to give, or null to call it. */
    private interface Interceptor
    {
        @Nullable
        Object intercept(Method method, Object[] arguments)
                throws Exception;
    }

    /** {@code target} behind {@code interceptor}. */
    private static <T> T proxy(Class<T> type, T target, Interceptor interceptor)
    {
        return type.cast(Proxy.newProxyInstance(MergeApplierIT.class.getClassLoader(), new Class<?>[] {type}, (proxy, method, arguments) -> {
            Object result = interceptor.intercept(method, arguments);
            if (result != null) {
                return result;
            }
            try {
                return method.invoke(target, arguments);
            }
            catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }));
    }

    @Test
    void identityColumnsAreWrittenAsTheSourceSendsThem()
            throws SQLException
    {
        schema.execute("CREATE TABLE tickets (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)",
                "CREATE TABLE counted (id int PRIMARY KEY, n bigint GENERATED ALWAYS AS IDENTITY, v text)",
                "INSERT INTO tickets (id, v) OVERRIDING SYSTEM VALUE VALUES (1, 'a'), (2, 'b')",
                "INSERT INTO counted (id, n, v) OVERRIDING SYSTEM VALUE VALUES (1, 10, 'a')");
        TableSchema tickets = TableSchema.of(TableId.of("src", "tickets"), List.of("id", "v"), List.of("id"));
        TableSchema counted = TableSchema.of(TableId.of("src", "counted"), List.of("id", "n", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(tickets, null, new Object[] {1L, "updated"}, at(1), 0));
            sink.accept(ChangeEvent.insert(tickets, new Object[] {7L, "new"}, at(2), 0));
            sink.accept(ChangeEvent.update(tickets, null, new Object[] {9L, "never inserted"}, at(3), 0));
            // an identity column outside the key: COPY writes it as given, an UPDATE could not
            sink.accept(ChangeEvent.update(counted, null, new Object[] {1, 11L, "updated"}, at(4), 0));
            sink.accept(ChangeEvent.insert(counted, new Object[] {2, 20L, "new"}, at(5), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, v FROM tickets ORDER BY id"))
                .containsExactly(List.of("1", "updated"), List.of("2", "b"), List.of("7", "new"), List.of("9", "never inserted"));
        assertThat(TestingSink.query(schema, "SELECT id, n, v FROM counted ORDER BY id"))
                .containsExactly(List.of("1", "11", "updated"), List.of("2", "20", "new"));
    }

    @Test
    void largeValuesAreCompressedWithLz4WhereTheServerHasIt()
            throws Exception
    {
        assumeTrue(server().majorVersion() >= 14, "TOAST compression methods and pg_column_compression are PostgreSQL 14+");
        schema.execute("CREATE TABLE packed (id int PRIMARY KEY, body text)", "CREATE TABLE plain (id int PRIMARY KEY, body text)");
        List<String> server = TestingSink.query(schema, """
                SELECT 'lz4' = ANY (enumvals)::text, current_setting('default_toast_compression')
                FROM pg_settings WHERE name = 'default_toast_compression'""").get(0);
        String body = "pgsink compresses this value ".repeat(500);
        for (String table : List.of("packed", "plain")) {
            TableSchema source = TableSchema.of(TableId.of("src", table), List.of("id", "body"), List.of("id"));
            Map<String, String> compression = table.equals("plain") ? Map.of(SinkConfig.TARGET_TOAST_COMPRESSION, "server-default") : Map.of();
            try (BufferedSink sink = sink(compression)) {
                sink.accept(ChangeEvent.insert(source, new Object[] {1, body}, at(1), 0));
                sink.flush();
            }
        }
        String lz4OrDefault = server.get(0).equals("true") ? "lz4" : server.get(1);
        assertThat(TestingSink.query(schema, "SELECT length(body), pg_column_compression(body) FROM packed")).containsExactly(List.of(String.valueOf(body.length()), lz4OrDefault));
        assertThat(TestingSink.query(schema, "SELECT length(body), pg_column_compression(body) FROM plain")).containsExactly(List.of(String.valueOf(body.length()), server.get(1)));
    }

    @Test
    void wideRowsAreDeletedAndInserted()
            throws Exception
    {
        schema.execute("CREATE TABLE wide (id int PRIMARY KEY, body text)", "INSERT INTO wide VALUES (1, 'a'), (2, 'b')");
        TableSchema source = TableSchema.of(TableId.of("src", "wide"), List.of("id", "body"), List.of("id"));
        String body = "x".repeat((int) TableWriter.MERGE_MAX_ROW_BYTES);
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.update(source, null, new Object[] {1, body}, at(1), 0));
            sink.accept(ChangeEvent.update(source, null, new Object[] {2, body}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, length(body) FROM wide ORDER BY id"))
                .containsExactly(List.of("1", String.valueOf(body.length())), List.of("2", String.valueOf(body.length())));
        // merging would write each row twice, into staging and then the target: both are deleted and inserted
        assertThat(updatedAndDeleted("wide", 2)).isEqualTo(List.of("0", "2"));
    }

    /**
     * The rows of {@code table} updated and deleted so far, once at least {@code expected} in all:
     * the sink's backend reports its statistics when it exits, after the sink closed.
     */
    private List<String> updatedAndDeleted(String table, long expected)
            throws Exception
    {
        String counts = "SELECT n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = '" + schema.name() + "' AND relname = '" + table + "'";
        // the statistics collector reports a moment after the commit
        AtomicReference<List<String>> written = new AtomicReference<>();
        Awaitility.await("table statistics of " + table).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            written.set(TestingSink.query(schema, counts).get(0));
            assertThat(Long.parseLong(written.get().get(0)) + Long.parseLong(written.get().get(1))).isGreaterThanOrEqualTo(expected);
        });
        return written.get();
    }

    @Test
    void rejectedValueNamesTableKeyAndColumnButNotTheValue()
            throws SQLException
    {
        schema.execute("CREATE TABLE narrow (id int PRIMARY KEY, code varchar(3))");
        TableSchema narrow = TableSchema.of(TableId.of("src", "narrow"), List.of("id", "code"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(narrow, new Object[] {1, "ok"}, at(1), 0));
            sink.accept(ChangeEvent.insert(narrow, new Object[] {2, "secret-too-long"}, at(2), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("\"narrow\" key (2) column code")
                    .hasMessageContaining("value too long for type character varying(3)")
                    .hasMessageContaining("offset {\"lsn\":2}")
                    .hasMessageNotContaining("secret-too-long")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.DATA);
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM narrow")).containsExactly(List.of("0"));
    }

    @Test
    void nulCharacterFailsOrIsStripped()
            throws SQLException
    {
        schema.execute("CREATE TABLE nul (id int PRIMARY KEY, v text)");
        TableSchema nul = TableSchema.of(TableId.of("src", "nul"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(nul, new Object[] {1, "a\u0000b"}, at(1), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("\"nul\" key (1) column v (text)")
                    .hasMessageContaining("NUL");
        }
        try (BufferedSink sink = sink(Map.of(SinkConfig.COPY_NUL_CHARACTER, "strip"))) {
            sink.accept(ChangeEvent.insert(nul, new Object[] {1, "a\u0000b"}, at(1), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT v FROM nul")).containsExactly(List.of("ab"));
    }

    @Test
    void schemaProblemsAreNamed()
            throws SQLException
    {
        schema.execute("CREATE TABLE nokey (id int, v text)", "CREATE TABLE fewer (id int PRIMARY KEY)");
        TableSchema missingTable = TableSchema.of(TableId.of("src", "absent"), List.of("id"), List.of("id"));
        TableSchema noKeyTarget = TableSchema.of(TableId.of("src", "nokey"), List.of("id", "v"), List.of("id"));
        TableSchema extraColumn = TableSchema.of(TableId.of("src", "fewer"), List.of("id", "added"), List.of("id"));
        TableSchema keylessSource = TableSchema.of(TableId.of("src", "nokey"), List.of("id", "v"), List.of());
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(missingTable, new Object[] {1}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("Target table \"" + schema.name() + "\".\"absent\" does not exist");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(noKeyTarget, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("the target table has no primary key").hasMessageContaining("PRIMARY KEY (id)");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(extraColumn, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("target has no column(s) [added]");
        }
        try (BufferedSink sink = sink(Map.of())) {
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("the source table has no primary key").hasMessageContaining("tables.without.key=append-only");
        }
        try (BufferedSink sink = sink(Map.of(SinkConfig.TABLES_WITHOUT_KEY, "append-only"))) {
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(1), 0));
            sink.accept(ChangeEvent.insert(keylessSource, new Object[] {1, "a"}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT id, v FROM nokey")).containsExactly(List.of("1", "a"), List.of("1", "a"));
    }

    @Test
    void sinksStartingTogetherShareTheOffsetsTable()
            throws Exception
    {
        // CREATE TABLE IF NOT EXISTS is not atomic: concurrent starts race on the catalog
        for (int round = 0; round < 5; round++) {
            SinkConfig config = TestingSink.config(schema, Map.of(SinkConfig.OFFSETS_TABLE, "raced_offsets_" + round));
            java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(6);
            java.util.concurrent.ExecutorService executor = java.util.concurrent.Executors.newFixedThreadPool(6);
            try {
                List<java.util.concurrent.Future<Map<String, SourcePosition>>> starts = new java.util.ArrayList<>();
                for (int sink = 0; sink < 6; sink++) {
                    starts.add(executor.submit(() -> {
                        try (MergeApplier applier = new MergeApplier(config)) {
                            barrier.await();
                            return applier.committedPositions();
                        }
                    }));
                }
                for (java.util.concurrent.Future<Map<String, SourcePosition>> start : starts) {
                    assertThat(start.get()).isEmpty();
                }
            }
            finally {
                executor.shutdownNow();
            }
        }
    }

    @Test
    void smallFlushTakesTwoRoundTrips()
            throws SQLException
    {
        createTable("trips", "id bigint PRIMARY KEY, v text, n numeric(12,2)");
        schema.execute("INSERT INTO trips SELECT i, 'base ' || i, i FROM generate_series(1, 1000) i");
        TableSchema trips = TableSchema.of(TableId.of("src", "trips"), List.of("id", "v", "n"), List.of("id"));
        // the COPY path, counted the same way: position, COPY into staging (statement, then data), MERGE with COMMIT;
        // deleting and inserting, the DELETE, a second COPY (the rows, straight into the target) and COMMIT
        long copy = updatesInPlace() ? 4 : 7;
        assertThat(roundTripsPerFlush(trips, "0", 0)).containsExactly(copy, copy, copy);
        // position, the MERGE (or the DELETE and the INSERT sent together) with COMMIT
        assertThat(roundTripsPerFlush(trips, "256", 1)).containsExactly(2L, 2L, 2L);
        // base rows, 2 x 3 x (40 inserts - 10 deletes), and the warm-up's insert of key 1001
        assertThat(TestingSink.query(schema, "SELECT count(*), count(*) FILTER (WHERE v LIKE 'flush %') FROM trips")).containsExactly(List.of("1181", "480"));
    }

    /**
     * Across a network (20 ms per round trip), a flush that merges 1,000 changes stages its fresh
     * rows with the rest, which costs the server less than the two round trips of a second COPY:
     * position, COPY into staging (statement, then data), MERGE with COMMIT. Deleting and inserting,
     * the final rows still go straight into the target.
     */
    @Test
    void flushAcrossANetworkCopiesOnce()
            throws SQLException
    {
        createTable("far", "id bigint PRIMARY KEY, v text");
        schema.execute("INSERT INTO far SELECT i, 'base ' || i FROM generate_series(1, 1000) i");
        TableSchema far = TableSchema.of(TableId.of("src", "far"), List.of("id", "v"), List.of("id"));
        String counter = schema.name() + "-far";
        Map<String, String> properties = Map.of(
                SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, "256",
                SinkConfig.FLUSH_MAX_EVENTS, "100000",
                SinkConfig.FLUSH_INTERVAL_MS, "3600000",
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactory", RoundTripCountingSocketFactory.Across.class.getName(),
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactoryArg", counter);
        List<Long> roundTrips = new ArrayList<>();
        long offset = 0;
        try (BufferedSink sink = sink(properties)) {
            for (int flush = 0; flush < 3; flush++) {
                for (int i = 0; i < 600; i++) {
                    long key = 10_000 + flush * 1_000L + i;
                    sink.accept(ChangeEvent.insert(far, new Object[] {key, "new " + flush}, at(++offset), 0));
                }
                for (int i = 0; i < 300; i++) {
                    long key = 1 + flush * 300L + i;
                    sink.accept(ChangeEvent.update(far, null, new Object[] {key, "updated " + flush}, at(++offset), 0));
                }
                for (int i = 0; i < 100; i++) {
                    sink.accept(ChangeEvent.delete(far, new Object[] {901L + flush * 30 + i % 30, null}, at(++offset), 0));
                }
                long before = RoundTripCountingSocketFactory.roundTrips(counter);
                sink.flush();
                roundTrips.add(RoundTripCountingSocketFactory.roundTrips(counter) - before);
            }
        }
        // the first flush also opens the connection and plans the table
        long copyOnce = updatesInPlace() ? 4 : 7;
        assertThat(roundTrips.subList(1, 3)).containsExactly(copyOnce, copyOnce);
        assertThat(TestingSink.query(schema, "SELECT count(*), count(*) FILTER (WHERE v LIKE 'new %'), count(*) FILTER (WHERE v LIKE 'updated %') FROM far"))
                .containsExactly(List.of("2710", "1800", "900"));
    }

    /**
     * The positions of several source partitions and the checks of several writer fences (a Kafka
     * Connect task holds one per topic partition) travel together, with the transaction's BEGIN:
     * a small flush still takes 2 round trips, as without them.
     */
    @Test
    void positionsAndFenceChecksTakeOneRoundTrip()
            throws SQLException
    {
        createTable("fenced_trips", "id bigint PRIMARY KEY, v text");
        TableSchema table = TableSchema.of(TableId.of("src", "fenced_trips"), List.of("id", "v"), List.of("id"));
        String counter = schema.name() + "-fenced-trips";
        Map<String, String> properties = Map.of(
                SinkConfig.SINK_NAME, "fenced_trips",
                SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, "256",
                SinkConfig.FLUSH_MAX_EVENTS, "100000",
                SinkConfig.FLUSH_INTERVAL_MS, "3600000",
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactory", RoundTripCountingSocketFactory.class.getName(),
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactoryArg", counter);
        MergeApplier applier = applier(properties);
        for (String fence : List.of("orders-0", "orders-1", "orders-2")) {
            applier.claim(fence);
        }
        SinkConfig config = config(properties);
        List<Long> roundTrips = new ArrayList<>();
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), applier)) {
            for (int flush = 0; flush < 3; flush++) {
                for (int i = 0; i < 20; i++) {
                    long key = flush * 100L + i;
                    sink.accept(ChangeEvent.insert(table, new Object[] {key, "flush " + flush}, new SourcePosition("orders-" + (i % 3), Long.toString(key)), 0));
                }
                long before = RoundTripCountingSocketFactory.roundTrips(counter);
                sink.flush();
                roundTrips.add(RoundTripCountingSocketFactory.roundTrips(counter) - before);
            }
        }
        // the first flush also plans the table; then: positions and checks, the MERGE with COMMIT
        assertThat(roundTrips.subList(1, 3)).containsExactly(2L, 2L);
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM fenced_trips")).containsExactly(List.of("60"));
        assertThat(TestingSink.query(schema, "SELECT source_partition, source_offset FROM pgsink_offsets WHERE sink_name = 'fenced_trips' ORDER BY 1"))
                .containsExactly(List.of("orders-0", "218"), List.of("orders-1", "219"), List.of("orders-2", "217"));
    }

    /**
     * Round trips of each of three flushes of 100 changes (40 inserts of new keys, 40 updates, 10
     * deletes, 10 changes of keys inserted earlier in the flush), after a first flush that plans
     * the table and opens the connection.
     */
    private List<Long> roundTripsPerFlush(TableSchema table, String smallBatchMaxEvents, int run)
    {
        String counter = schema.name() + "-trips-" + run;
        Map<String, String> properties = Map.of(
                SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, smallBatchMaxEvents,
                SinkConfig.FLUSH_MAX_EVENTS, "100000",
                SinkConfig.FLUSH_INTERVAL_MS, "3600000",
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactory", RoundTripCountingSocketFactory.class.getName(),
                SinkConfig.TARGET_JDBC_PREFIX + "socketFactoryArg", counter);
        Long[] roundTrips = new Long[3];
        try (BufferedSink sink = sink(properties)) {
            sink.accept(ChangeEvent.update(table, null, new Object[] {1000L + run, "warm-up", 1}, at(1), 0));
            sink.flush();
            for (int flush = 0; flush < roundTrips.length; flush++) {
                long firstKey = 2000 + run * 1000 + flush * 100;
                int offset = 10 + flush * 100;
                for (int i = 0; i < 40; i++) {
                    sink.accept(ChangeEvent.insert(table, new Object[] {firstKey + i, "flush " + flush, 1}, at(offset++), 0));
                }
                for (int i = 0; i < 10; i++) {
                    sink.accept(ChangeEvent.update(table, null, new Object[] {firstKey + i, "flush " + flush, 1}, at(offset++), 0));
                }
                long updated = 1 + run * 300 + flush * 100;
                for (int i = 0; i < 40; i++) {
                    sink.accept(ChangeEvent.update(table, null, new Object[] {updated + i, "flush " + flush, 1}, at(offset++), 0));
                }
                for (int i = 40; i < 50; i++) {
                    sink.accept(ChangeEvent.delete(table, new Object[] {updated + i, null, null}, at(offset++), 0));
                }
                long before = RoundTripCountingSocketFactory.roundTrips(counter);
                sink.flush();
                roundTrips[flush] = RoundTripCountingSocketFactory.roundTrips(counter) - before;
            }
        }
        return List.of(roundTrips);
    }

    /**
     * Values of every type the small path binds as an array literal of its own type, and of text
     * (bound as a text array), with the characters array literals and CSV escape, come out of
     * either path alike: inserted, then updated in place (or deleted and inserted).
     */
    @Test
    void valuesOfBoundTypesReadAlikeOnBothPaths()
            throws SQLException
    {
        String definitions = "id bigint PRIMARY KEY, s smallint, i integer, n numeric(20,5), r real, d double precision, b boolean, dt date,"
                + " ts timestamp(3), tz timestamp with time zone, tm time, u uuid, jb jsonb, js json, by bytea, tx text, vc varchar(40)";
        List<String> names = List.of("id", "s", "i", "n", "r", "d", "b", "dt", "ts", "tz", "tm", "u", "jb", "js", "by", "tx", "vc");
        TableSchema source = TableSchema.of(TableId.of("src", "bound"), names, List.of("id"));
        String tricky = "a \"quoted\" \\ back,slash {brace} NULL\nline";
        Object[] first = {1L, (short) -7, 42, new BigDecimal("-12345.67891"), 1.5f, Double.NaN, true, LocalDate.of(2026, 11, 25),
                LocalDateTime.of(2026, 11, 25, 7, 30, 1, 123_000_000), OffsetDateTime.of(2026, 11, 25, 7, 30, 1, 0, ZoneOffset.ofHours(2)),
                LocalTime.of(23, 59, 58), UUID.fromString("0f8fad5b-d9cb-469f-a165-70867728950e"), "{\"k\": \"v \\\" {x}, y\"}", "[1, \"a,b\"]",
                new byte[] {0, 1, (byte) 0xff, '\\', '"'}, tricky, ""};
        Object[] nulls = new Object[names.size()];
        nulls[0] = 2L;
        Object[] second = first.clone();
        second[1] = Short.MAX_VALUE;
        second[2] = Integer.MIN_VALUE;
        second[5] = Double.NEGATIVE_INFINITY;
        second[12] = "{\"NULL\": null}";
        second[15] = "NULL";
        second[16] = "\"";
        for (String path : List.of("copy", "small")) {
            createTable("bound_" + path, definitions);
            try (BufferedSink sink = sink(Map.of(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, path.equals("copy") ? "0" : "256",
                    SinkConfig.TARGET_TABLE_NAME_FORMAT, schema.name() + ".${table}_" + path))) {
                sink.accept(ChangeEvent.insert(source, first.clone(), at(1), 0));
                sink.accept(ChangeEvent.insert(source, nulls.clone(), at(2), 0));
                sink.flush();
                sink.accept(ChangeEvent.update(source, null, second.clone(), at(3), 0));
                sink.flush();
            }
        }
        String rows = "SELECT t::text FROM %s t ORDER BY id";
        List<List<String>> small = TestingSink.query(schema, rows.formatted("bound_small"));
        assertThat(small)
                .isEqualTo(TestingSink.query(schema, rows.formatted("bound_copy")))
                .hasSize(2);
        assertThat(TestingSink.query(schema, "SELECT tx, vc, jb ->> 'NULL' IS NULL, by = '\\x0001ff5c22'::bytea FROM bound_small WHERE id = 1"))
                .containsExactly(List.of("NULL", "\"", "t", "t"));
        assertThat(TestingSink.query(schema, "SELECT num_nulls(s, i, n, r, d, b, dt, ts, tz, tm, u, jb, js, by, tx, vc) FROM bound_small WHERE id = 2"))
                .containsExactly(List.of("16"));
    }

    /** Lengths, padding and rounding of types with modifiers come out of either path alike: the small path casts text without the modifier and lets the assignment apply it, as COPY does. */
    @Test
    void typeModifiersApplyAlikeOnBothPaths()
            throws SQLException
    {
        String definitions = "id int PRIMARY KEY, c char(5), b bit(3), v varchar(4), n numeric(5,2), t timestamp(0) with time zone, a varchar(3)[]";
        TableSchema source = TableSchema.of(TableId.of("src", "modifiers"), List.of("id", "c", "b", "v", "n", "t", "a"), List.of("id"));
        Object[] row = {1, "ab", "101", "abcd", "1.005", "2026-11-24 10:00:00.6+00", "{ab,c}"};
        for (String path : List.of("copy", "small")) {
            createTable("modifiers_" + path, definitions);
            try (BufferedSink sink = sink(Map.of(SinkConfig.FLUSH_SMALL_BATCH_MAX_EVENTS, path.equals("copy") ? "0" : "256",
                    SinkConfig.TARGET_TABLE_NAME_FORMAT, schema.name() + ".${table}_" + path))) {
                sink.accept(ChangeEvent.insert(source, row.clone(), at(1), 0));
                sink.flush();
                Object[] tooLong = row.clone();
                tooLong[0] = 2;
                tooLong[3] = "abcde";
                sink.accept(ChangeEvent.insert(source, tooLong, at(2), 0));
                assertThatThrownBy(sink::flush).hasMessageContaining("value too long for type character varying(4)");
            }
        }
        // char(n) pads to n (its text form drops the padding again)
        String columns = "id, octet_length(c), b, v, n, t AT TIME ZONE 'UTC', a";
        assertThat(TestingSink.query(schema, "SELECT " + columns + " FROM modifiers_small"))
                .isEqualTo(TestingSink.query(schema, "SELECT " + columns + " FROM modifiers_copy"))
                .containsExactly(List.of("1", "5", "101", "abcd", "1.01", "2026-11-24 10:00:01", "{ab,c}"));
    }
}
