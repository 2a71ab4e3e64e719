package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.SchemaEvolution;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SchemaEvolutionIT
{
    private static final Map<String, String> EVOLVE = Map.of(SinkConfig.SCHEMA_EVOLUTION, "add-columns");

    private TestingSchema schema;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("evolution");
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

    private static TableSchema version(String table, ColumnSchema... columns)
    {
        return new TableSchema(TableId.of("src", table), List.of(columns), List.of("id"));
    }

    private static ColumnSchema column(String name, String type)
    {
        return new ColumnSchema(name, type, true);
    }

    @Test
    void createsMissingTableAddsColumnsAndKeepsDroppedOnes()
            throws SQLException
    {
        TableSchema v1 = version("Orders", column("id", "int8"), column("status", "varchar(10)"), column("amount", "numeric(10,2)"));
        TableSchema v2 = version("Orders", column("id", "int8"), column("status", "varchar(10)"), column("amount", "numeric(10,2)"), column("Coupon Code", "text"));
        TableSchema v3 = version("Orders", column("id", "int8"), column("Coupon Code", "text"), column("status", "varchar(10)"));
        try (BufferedSink sink = TestingSink.sink(schema, EVOLVE)) {
            sink.accept(ChangeEvent.insert(v1, new Object[] {1L, "new", new BigDecimal("9.99")}, at(1), 0));
            sink.flush();
            sink.accept(ChangeEvent.insert(v2, new Object[] {2L, "new", new BigDecimal("5.00"), "SAVE5"}, at(2), 0));
            sink.accept(ChangeEvent.update(v2, null, new Object[] {1L, "paid", new BigDecimal("9.99"), "LATE"}, at(3), 0));
            // amount dropped at the source, columns in another order: the target keeps amount, NULL for new rows
            sink.accept(ChangeEvent.insert(v3, new Object[] {3L, "NONE", "new"}, at(4), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a"
                + " WHERE a.attrelid = '\"" + schema.name() + "\".\"Orders\"'::regclass AND a.attnum > 0 ORDER BY a.attnum"))
                .containsExactly(List.of("id", "bigint"), List.of("status", "character varying(10)"), List.of("amount", "numeric(10,2)"), List.of("Coupon Code", "text"));
        assertThat(TestingSink.query(schema, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = '\"" + schema.name() + "\".\"Orders\"'::regclass AND contype = 'p'"))
                .containsExactly(List.of("PRIMARY KEY (id)"));
        assertThat(TestingSink.query(schema, "SELECT id, status, amount, \"Coupon Code\" FROM \"Orders\" ORDER BY id")).containsExactly(
                List.of("1", "paid", "9.99", "LATE"),
                List.of("2", "new", "5.00", "SAVE5"),
                Arrays.asList("3", "new", null, "NONE"));
    }

    /**
     * Without a source catalog (the Kafka Connect sink), a default the records cannot tell from a
     * stand-in is never written: a table created with it gets none, a column added to an empty
     * table gets none, and one added to a table with rows stops, naming table and column; a
     * constant default the records do know is written.
     */
    @Test
    void anUnknownDefaultIsNeverWritten()
            throws SQLException
    {
        ColumnSchema unknown = new ColumnSchema("created", "timestamptz", true, ColumnSchema.UnknownDefault.INSTANCE);
        TableSchema v1 = version("unknown_defaults", column("id", "int4"), unknown);
        TableSchema v2 = version("unknown_defaults", column("id", "int4"), unknown, new ColumnSchema("n", "int4", true, 42),
                new ColumnSchema("who", "text", true, ColumnSchema.UnknownDefault.INSTANCE));
        try (BufferedSink sink = TestingSink.sink(schema, EVOLVE)) {
            sink.accept(ChangeEvent.insert(v1, new Object[] {1, null}, at(1), 0));
            sink.flush();
            sink.accept(ChangeEvent.insert(v2, new Object[] {2, null, 2, "me"}, at(2), 0));
            assertThatThrownBy(sink::flush).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                    .hasMessage("Cannot add column(s) [who (text)] of \"src\".\"unknown_defaults\" to \"" + schema.name() + "\".\"unknown_defaults\": the records give them a default"
                            + " that may be the stand-in Debezium sends for a default it cannot evaluate (the epoch for now(), the text CURRENT_USER for current_user, the nil UUID"
                            + " for gen_random_uuid()), so what the rows that existed before the column was added hold on the source is unknown; add the column(s) to the target"
                            + " yourself (ALTER TABLE \"" + schema.name() + "\".\"unknown_defaults\" ADD COLUMN ...) with the source's default if it is a constant, or filled with"
                            + " the source's values for the existing keys, and restart.");
        }
        assertThat(TestingSink.query(schema, "SELECT count(*) FROM pg_attrdef WHERE adrelid = '\"" + schema.name() + "\".unknown_defaults'::regclass")).containsExactly(List.of("0"));

        schema.execute("CREATE TABLE unknown_empty (id int PRIMARY KEY)");
        TableSchema empty = version("unknown_empty", column("id", "int4"), new ColumnSchema("who", "text", true, ColumnSchema.UnknownDefault.INSTANCE),
                new ColumnSchema("n", "int4", true, 42));
        try (BufferedSink sink = TestingSink.sink(schema, EVOLVE)) {
            sink.accept(ChangeEvent.insert(empty, new Object[] {1, "me", 1}, at(3), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT attname, pg_get_expr(adbin, adrelid) FROM pg_attrdef JOIN pg_attribute ON attrelid = adrelid AND attnum = adnum"
                + " WHERE adrelid = '\"" + schema.name() + "\".unknown_empty'::regclass ORDER BY attnum")).containsExactly(List.of("n", "42"));
        assertThat(TestingSink.query(schema, "SELECT id, who, n FROM unknown_empty")).containsExactly(List.of("1", "me", "1"));
    }

    @Test
    void columnOrderOfTargetDoesNotMatter()
            throws SQLException
    {
        schema.execute("CREATE TABLE shuffled (extra text DEFAULT 'kept', note text, id int PRIMARY KEY, qty int)");
        TableSchema source = version("shuffled", column("id", "int4"), column("qty", "int4"), column("note", "text"));
        try (BufferedSink sink = TestingSink.sink(schema, Map.of())) {
            sink.accept(ChangeEvent.insert(source, new Object[] {1, 10, "ten"}, at(1), 0));
            sink.accept(ChangeEvent.insert(source, new Object[] {2, 20, "twenty"}, at(2), 0));
            sink.flush();
        }
        assertThat(TestingSink.query(schema, "SELECT extra, note, id, qty FROM shuffled ORDER BY id"))
                .containsExactly(List.of("kept", "ten", "1", "10"), List.of("kept", "twenty", "2", "20"));
    }

    @Test
    void incompatibleTypeChangeStops()
            throws SQLException
    {
        TableSchema v1 = version("typed", column("id", "int4"), column("code", "int4"));
        TableSchema v2 = version("typed", column("id", "int4"), column("code", "varchar(20)"));
        try (BufferedSink sink = TestingSink.sink(schema, EVOLVE)) {
            sink.accept(ChangeEvent.insert(v1, new Object[] {1, 7}, at(1), 0));
            sink.flush();
            sink.accept(ChangeEvent.insert(v2, new Object[] {2, "A-7"}, at(2), 0));
            assertThatThrownBy(sink::flush)
                    .isInstanceOf(SinkException.class)
                    .hasMessageContaining("Incompatible type change in \"src\".\"typed\": code changed from int4 to varchar(20) but is integer in the target")
                    .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
        }
        assertThat(TestingSink.query(schema, "SELECT id FROM typed")).containsExactly(List.of("1"));
    }

    @Test
    void withoutEvolutionMissingTablesAndColumnsAreErrors()
            throws SQLException
    {
        TableSchema absent = version("absent", column("id", "int4"));
        try (BufferedSink sink = TestingSink.sink(schema, Map.of())) {
            sink.accept(ChangeEvent.insert(absent, new Object[] {1}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("does not exist").hasMessageContaining("set schema.evolution=add-columns");
        }
        TableSchema untyped = TableSchema.of(TableId.of("src", "untyped"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = TestingSink.sink(schema, EVOLVE)) {
            sink.accept(ChangeEvent.insert(untyped, new Object[] {1, "x"}, at(1), 0));
            assertThatThrownBy(sink::flush).hasMessageContaining("the source did not send the type of column(s) [id, v]").hasMessageContaining("column.propagate.source.type");
        }
    }

    @Test
    void greenplumCreatesTablesDistributedByTheKey()
    {
        TableSchema source = new TableSchema(TableId.of("src", "t"), List.of(column("tenant", "int4"), column("id", "int8"), column("v", "text")), List.of("tenant", "id"));
        assertThat(SchemaEvolution.createTable(TableId.of("dw", "t"), source, Dialect.GREENPLUM, false)).containsExactly(
                "CREATE SCHEMA IF NOT EXISTS \"dw\"",
                "CREATE TABLE IF NOT EXISTS \"dw\".\"t\" (\"tenant\" int4 NOT NULL, \"id\" int8 NOT NULL, \"v\" text, PRIMARY KEY (\"tenant\", \"id\")) DISTRIBUTED BY (\"tenant\", \"id\")");
        assertThat(SchemaEvolution.createTable(TableId.of("dw", "t"), source, Dialect.POSTGRESQL, false).get(1)).doesNotContain("DISTRIBUTED");
        assertThat(SchemaEvolution.baseType("int4[]")).isEqualTo("_int4");
        assertThat(SchemaEvolution.baseType("numeric(10,2)")).isEqualTo("numeric");
    }
}
