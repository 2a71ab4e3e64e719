package io.pgsink.copy.load;

import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.copy.testing.Poll;
import io.pgsink.copy.testing.TestingCopies;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

@TestInstance(PER_CLASS)
class CopyLoaderTest
{
    private TestingSchema schema;
    private Connection connection;
    private Connection observer;
    private String table;
    private String copy;

    @BeforeAll
    void setUp()
            throws SQLException
    {
        schema = TestingPostgreSqlServer.target().createSchema("copy_loader");
        connection = schema.connect();
        observer = schema.connect();
        schema.execute(
                "CREATE TABLE target (id int, n int2, t text)",
                "CREATE TABLE not_null (id int, n int2, t text NOT NULL)",
                "CREATE TABLE texts (a text, b text)");
        table = SqlIdentifiers.qualified(schema.name(), "target");
        copy = CopyLoader.copyStatement(table, List.of("id", "n", "t"), CopyFormat.DEFAULT);
    }

    @BeforeEach
    void emptyTables()
            throws SQLException
    {
        connection.setAutoCommit(true);
        schema.execute("TRUNCATE target", "TRUNCATE not_null", "TRUNCATE texts");
    }

    @AfterAll
    void tearDown()
            throws SQLException
    {
        try {
            assertThat(TestingCopies.activeCopies(connection)).isZero();
        }
        finally {
            try {
                connection.close();
                observer.close();
            }
            finally {
                schema.close();
            }
        }
    }

    @Test
    void copyStatement()
    {
        assertThat(CopyLoader.copyStatement("\"s\".\"t\"", List.of("a", "b"), CopyFormat.DEFAULT))
                .isEqualTo("COPY \"s\".\"t\" (\"a\", \"b\") FROM STDIN (FORMAT csv, DELIMITER ',', QUOTE '\"', ESCAPE '\"', NULL '')");
        assertThat(CopyLoader.copyStatement(SqlIdentifiers.qualified("My Schema", "t\"x"), List.of("Id", "a\"b"), new CopyFormat('|', '\'', '\\', "\\N", NulCharacterHandling.STRIP)))
                .isEqualTo("COPY \"My Schema\".\"t\"\"x\" (\"Id\", \"a\"\"b\") FROM STDIN (FORMAT csv, DELIMITER '|', QUOTE '''', ESCAPE '\\', NULL '\\N')");
        assertThatThrownBy(() -> CopyLoader.copyStatement("t", List.of(), CopyFormat.DEFAULT)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void loadsIntoTablesWithAnyName()
            throws SQLException
    {
        String weirdTable = SqlIdentifiers.qualified(schema.name(), "We\"ird Tab.le ä");
        List<String> columns = List.of("Id", "sel ect", "ä\"x");
        schema.execute("CREATE TABLE " + weirdTable + " (" + SqlIdentifiers.quote(columns.get(0)) + " int, "
                + SqlIdentifiers.quote(columns.get(1)) + " text, " + SqlIdentifiers.quote(columns.get(2)) + " text)");
        CopyFormat format = new CopyFormat('|', '\'', '\\', "\\N", NulCharacterHandling.FAIL);
        long rows = CopyLoader.copyIn(connection, CopyLoader.copyStatement(weirdTable, columns, format), format, writer -> {
            for (int i = 0; i < 3; i++) {
                writer.writeLong(i);
                writer.writeText("it's | row " + i);
                writer.writeNull();
                writer.endRow();
            }
        });
        assertThat(rows).isEqualTo(3);
        assertThat(query("SELECT \"Id\" || ':' || \"sel ect\" || ':' || coalesce(\"ä\"\"x\", 'null') FROM " + weirdTable + " ORDER BY 1"))
                .containsExactly("0:it's | row 0:null", "1:it's | row 1:null", "2:it's | row 2:null");
    }

    @Test
    void listenerIsToldEveryByteSent()
            throws SQLException
    {
        long[] sent = new long[2];
        long rows = CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            for (int i = 0; i < 1_000; i++) {
                writer.writeLong(i);
                writer.writeLong(i % 100);
                writer.writeText("row " + i);
                writer.endRow();
            }
        }, bytes -> {
            sent[0] += bytes;
            sent[1]++;
        });
        assertThat(rows).isEqualTo(1_000);
        // what COPY TO writes back is the same CSV: one line per row
        assertThat(sent[0]).isEqualTo(Long.parseLong(query("SELECT sum(octet_length(id || ',' || n || ',' || t) + 1) FROM target").get(0)));
        assertThat(sent[1]).isPositive();
    }

    @Test
    void emptyBodyLoadsNothing()
            throws SQLException
    {
        assertThat(CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {})).isZero();
        assertThat(count("target")).isZero();
    }

    @Test
    void failingBodyCancelsTheCopyAfterChunksWereSent()
            throws SQLException
    {
        schema.execute("INSERT INTO target VALUES (-1, -1, 'before')");
        int pid = backendPid(connection);
        IllegalStateException failure = new IllegalStateException("body failed");
        Throwable thrown = catchThrowable(() -> CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            String payload = "x".repeat(100);
            for (int i = 0; i < 10_000; i++) {
                writer.writeLong(i);
                writer.writeLong(i % 100);
                writer.writeText(payload);
                writer.endRow();
            }
            // the server has received and parsed rows: a COPY ended now would load them
            Poll.until("the server to parse rows of the COPY", Duration.ofSeconds(30), () -> assertThat(processedTuples(pid)).isPositive());
            throw failure;
        }));
        assertThat(thrown).isSameAs(failure);
        assertThat(thrown.getSuppressed()).isEmpty();
        assertThat(query("SELECT t FROM target")).containsExactly("before");
        assertUsable();
    }

    @Test
    void failingBodyInTransactionLeavesTheTransactionToRollBack()
            throws SQLException
    {
        connection.setAutoCommit(false);
        try (Statement statement = connection.createStatement()) {
            statement.execute("INSERT INTO target VALUES (-1, -1, 'in transaction')");
        }
        SQLException failure = new SQLException("body failed", "XX000");
        assertThatThrownBy(() -> CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            writer.writeLong(1);
            writer.writeLong(2);
            writer.writeText("three");
            writer.endRow();
            throw failure;
        })).isSameAs(failure);
        // the cancelled COPY aborted the transaction
        assertThatThrownBy(() -> query("SELECT 1")).isInstanceOf(PSQLException.class).extracting(e -> ((SQLException) e).getSQLState())
                .isEqualTo(PSQLState.IN_FAILED_SQL_TRANSACTION.getState());
        connection.rollback();
        connection.setAutoCommit(true);
        assertThat(count("target")).isZero();
        assertUsable();
    }

    @Test
    void valueEncodingFailureCancelsTheCopy()
            throws SQLException
    {
        assertThatThrownBy(() -> CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            writer.writeLong(1);
            writer.writeLong(2);
            writer.writeText("fine");
            writer.endRow();
            writer.writeLong(2);
            writer.writeLong(3);
            writer.writeText("bad\0");
            writer.endRow();
        })).isInstanceOf(ValueEncodingException.class).hasMessageContaining("NUL character");
        assertThat(count("target")).isZero();
        assertUsable();
    }

    @Test
    void discardedRowsAreNotLoaded()
            throws SQLException
    {
        long rows = CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            for (int i = 0; i < 4; i++) {
                writer.writeLong(i);
                writer.writeLong(i);
                try {
                    writer.writeText(i == 2 ? "bad\0" : "good");
                    writer.endRow();
                }
                catch (ValueEncodingException e) {
                    writer.discardRow();
                }
            }
        });
        assertThat(rows).isEqualTo(3);
        assertThat(query("SELECT id || t FROM target ORDER BY id")).containsExactly("0good", "1good", "3good");
    }

    @Test
    void rejectedValueIsDescribedByLineAndColumnWithoutTheValue()
            throws SQLException
    {
        assertRejected(copy, writer -> {
            row(writer, 1, "1", "a");
            row(writer, 2, "2", "b");
            row(writer, 3, "99999", "c");
        }, 3, "SQLState 22003: value is out of range for type smallint (COPY target, line 3, column n)", "99999");
        // the server counts the line feed inside the value: its line 3 is row 2
        assertRejected(copy, writer -> {
            row(writer, 1, "1", "a");
            row(writer, 2, "secret\nvalue, \"quoted\"", "b");
        }, 2, "SQLState 22P02: invalid input syntax for type smallint (COPY target, line 3, column n)", "secret");
        assertRejected(copy, writer -> {
            writer.writeLong(1);
            writer.writeText("1");
            writer.writeText("secret");
            writer.writeText("extra");
            writer.endRow();
        }, 1, "SQLState 22P04: extra data after last expected column (COPY target, line 1)", "secret");
        String texts = CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "texts"), List.of("a", "b"), CopyFormat.DEFAULT);
        assertRejected(texts, writer -> {
            writer.writeText("secret");
            writer.endRow();
        }, 1, "SQLState 22P04: missing data for column \"b\" (COPY texts, line 1)", "secret");
        String notNull = CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "not_null"), List.of("id", "n", "t"), CopyFormat.DEFAULT);
        assertRejected(notNull, writer -> {
            row(writer, 1, "1", "secret");
            writer.writeLong(2);
            writer.writeText("12345");
            writer.writeNull();
            writer.endRow();
        }, 2, "SQLState 23502: null value in column \"t\" of relation \"not_null\" violates not-null constraint (COPY not_null, line 2)", "12345");
    }

    @Test
    void rejectedRowIsFoundDespiteLineFeedsInValues()
            throws SQLException
    {
        CopyRejectedException rejected = (CopyRejectedException) catchThrowable(() -> CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            // line feeds in the first row do not count in the server's line numbers, later ones do
            row(writer, 1, "1", "one\ntwo\nthree");
            row(writer, 2, "2", "one\r\ntwo\n");
            writer.writeLong(3);
            writer.beginField();
            writer.appendText("{\"multi\nline\"}");
            writer.endField();
            writer.writeText("\n");
            writer.discardRow();
            row(writer, 3, "3", "\n\n\n");
            row(writer, 4, "4", "x");
            row(writer, 5, "bad", "x");
            row(writer, 6, "6", "x");
        }));
        assertThat(CopyLoader.describeCopyFailure(rejected)).isEqualTo("SQLState 22P02: invalid input syntax for type smallint (COPY target, line 10, column n)");
        assertThat(rejected.row()).isEqualTo(5);
        assertThat(rejected.getSQLState()).isEqualTo("22P02");
        assertThat(rejected.getServerErrorMessage()).isSameAs(((PSQLException) rejected.getCause()).getServerErrorMessage());
        assertThat(count("target")).isZero();
        assertUsable();
    }

    @Test
    void earlyRejectionDuringALongStream()
            throws SQLException
    {
        // the server fails on line 1 while the client is still sending megabytes
        CopyRejectedException rejected = (CopyRejectedException) catchThrowable(() -> CopyLoader.copyIn(connection, copy, CopyFormat.DEFAULT, writer -> {
            row(writer, 1, "not a number", "a");
            String payload = "y".repeat(200);
            for (int i = 0; i < 20_000; i++) {
                writer.writeLong(i);
                writer.writeLong(1);
                writer.writeText(payload);
                writer.endRow();
            }
        }));
        assertThat(rejected.row()).isEqualTo(1);
        assertThat(CopyLoader.describeCopyFailure(rejected)).isEqualTo("SQLState 22P02: invalid input syntax for type smallint (COPY target, line 1, column n)");
        assertThat(count("target")).isZero();
        assertUsable();
    }

    @Test
    void describesClientSideFailures()
    {
        assertThat(CopyLoader.describeCopyFailure(new SQLException("connection reset", "08006"))).isEqualTo("SQLState 08006: connection reset");
        assertThat(CopyLoader.describeCopyFailure(new PSQLException("I/O error", PSQLState.CONNECTION_FAILURE))).isEqualTo("SQLState 08006: I/O error");
        assertThat(CopyLoader.describeCopyFailure(new SQLException("no state"))).isEqualTo("SQLState none: no state");
    }

    private void assertRejected(String copySql, CopyBody body, long row, String description, String secret)
            throws SQLException
    {
        Throwable thrown = catchThrowable(() -> CopyLoader.copyIn(connection, copySql, CopyFormat.DEFAULT, body));
        assertThat(thrown).isInstanceOf(CopyRejectedException.class);
        CopyRejectedException rejected = (CopyRejectedException) thrown;
        assertThat(rejected.row()).isEqualTo(row);
        // the server's own text does carry the value, in the message or the detail...
        assertThat(rejected.getServerErrorMessage()).isNotNull();
        assertThat(rejected.getMessage()).contains(secret);
        // ...the description does not
        assertThat(CopyLoader.describeCopyFailure(rejected)).isEqualTo(description).doesNotContain(secret);
        assertThat(rejected.getSuppressed()).isEmpty();
        assertThat(count("target") + count("not_null") + count("texts")).isZero();
        assertUsable();
    }

    private static void row(CsvWriter writer, int id, String n, String t)
            throws SQLException
    {
        writer.writeLong(id);
        writer.writeText(n);
        writer.writeText(t);
        writer.endRow();
    }

    /** The connection accepts statements and COPYs again, and no COPY is left open. */
    private void assertUsable()
            throws SQLException
    {
        assertThat(query("SELECT 'usable'")).containsExactly("usable");
        assertThat(TestingCopies.activeCopies(connection)).isZero();
        String probe = CopyLoader.copyStatement(SqlIdentifiers.qualified(schema.name(), "target"), List.of("id"), CopyFormat.DEFAULT);
        long before = count("target");
        assertThat(CopyLoader.copyIn(connection, probe, CopyFormat.DEFAULT, writer -> {
            writer.writeLong(1000);
            writer.endRow();
        })).isEqualTo(1);
        assertThat(count("target")).isEqualTo(before + 1);
        schema.execute("DELETE FROM target WHERE id = 1000");
    }

    /** The COPY's progress, seen from another connection: the rows the server has parsed. */
    private long processedTuples(int pid)
            throws SQLException
    {
        try (PreparedStatement statement = observer.prepareStatement("SELECT tuples_processed FROM pg_stat_progress_copy WHERE pid = ?")) {
            statement.setInt(1, pid);
            try (ResultSet result = statement.executeQuery()) {
                return result.next() ? result.getLong(1) : 0;
            }
        }
    }

    private static int backendPid(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT pg_backend_pid()")) {
            result.next();
            return result.getInt(1);
        }
    }

    private long count(String tableName)
            throws SQLException
    {
        return Long.parseLong(query("SELECT count(*) FROM " + tableName).get(0));
    }

    private List<String> query(String sql)
            throws SQLException
    {
        List<String> values = new ArrayList<>();
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                values.add(result.getString(1));
            }
        }
        return values;
    }
}
