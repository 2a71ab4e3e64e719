package io.pgsink.copy.sql;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

class SqlFailuresTest
{
    @Test
    void transientStates()
    {
        for (String state : new String[] {"08000", "08001", "08003", "08006", "57P01", "57P02", "57P03", "57P05", "40001", "40P01", "57014", "53300"}) {
            assertThat(SqlFailures.isTransient(new SQLException("failed", state))).as(state).isTrue();
            assertThat(SqlFailures.classify(new SQLException("failed", state))).as(state).isEqualTo(ErrorCode.TRANSIENT);
        }
        for (String state : new String[] {"28P01", "28000", "3D000", "57P04", "42501", "42P01", "23505", "22001", "XX000"}) {
            assertThat(SqlFailures.isTransient(new SQLException("failed", state))).as(state).isFalse();
        }
        assertThat(SqlFailures.isTransient(new SQLException("no state"))).isFalse();
        assertThat(SqlFailures.isTransient(new PSQLException("I/O error", PSQLState.CONNECTION_FAILURE))).isTrue();
    }

    @Test
    void dataAndSchemaStates()
    {
        assertThat(SqlFailures.classify(new SQLException("too long", "22001"))).isEqualTo(ErrorCode.DATA);
        assertThat(SqlFailures.classify(new SQLException("duplicate", SqlFailures.UNIQUE_VIOLATION))).isEqualTo(ErrorCode.DATA);
        assertThat(SqlFailures.classify(new SQLException("missing", SqlFailures.UNDEFINED_TABLE))).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
        assertThat(SqlFailures.classify(new SQLException("no state"))).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
    }

    @Test
    void accessFailuresAreConfigurationWithARemedy()
    {
        for (String state : new String[] {"28P01", "28000", "42501", "3D000", "57P04"}) {
            SQLException failure = new SQLException("refused", state);
            assertThat(SqlFailures.isAccessFailure(failure)).as(state).isTrue();
            assertThat(SqlFailures.classify(failure)).as(state).isEqualTo(ErrorCode.CONFIG);
            assertThat(SqlFailures.remedy(failure, "u", "p", "url")).as(state).isPresent();
        }
        assertThat(SqlFailures.remedy(new SQLException("wrong password", "28P01"), "target.user", "target.password", "target.url"))
                .contains("the server refused the login: check target.user and target.password (and the server's pg_hba.conf), then start pgsink again");
        assertThat(SqlFailures.remedy(new SQLException("denied", "42501"), "target.user", "target.password", "target.url").orElseThrow()).contains("grant it");
        assertThat(SqlFailures.remedy(new SQLException("no database", "3D000"), "target.user", "target.password", "target.url").orElseThrow()).contains("fix target.url");
        assertThat(SqlFailures.remedy(new SQLException("lost", "08006"), "u", "p", "url")).isEmpty();
        // HikariCP's timeout carries the state of the failure behind it
        assertThat(SqlFailures.classify(new java.sql.SQLTransientConnectionException("not available", "28P01"))).isEqualTo(ErrorCode.CONFIG);
        assertThat(SqlFailures.classify(new java.sql.SQLTransientConnectionException("not available"))).isEqualTo(ErrorCode.TRANSIENT);
    }

    @Test
    void descriptionsCarryNoValues()
    {
        PSQLException syntax = server("22P02", "invalid input syntax for type integer: \"secret\"", "COPY t, line 3, column n: \"secret\"");
        assertThat(SqlFailures.describe(syntax)).isEqualTo("invalid input syntax for type integer [SQLState 22P02]");
        assertThat(SqlFailures.describeCopy(syntax)).isEqualTo("SQLState 22P02: invalid input syntax for type integer (COPY t, line 3, column n)");
        assertThat(SqlFailures.copyColumn(syntax)).isEqualTo("n");

        PSQLException range = server("22003", "value \"99999\" is out of range for type smallint", null);
        assertThat(SqlFailures.describe(range)).isEqualTo("value is out of range for type smallint [SQLState 22003]");
        assertThat(SqlFailures.copyColumn(range)).isNull();

        // the DETAIL can quote a whole row: never part of a description
        PSQLException duplicate = server("23505", "duplicate key value violates unique constraint \"t_pkey\"", null);
        assertThat(SqlFailures.describe(duplicate)).isEqualTo("duplicate key value violates unique constraint \"t_pkey\" [SQLState 23505]").doesNotContain("secret");

        assertThat(SqlFailures.describe(new SQLException("connection reset", "08006"))).isEqualTo("connection reset [SQLState 08006]");
        assertThat(SqlFailures.describe(new SQLException((String) null, "08006"))).isEqualTo("SQLException [SQLState 08006]");
    }

    @Test
    void translateNamesContextAndKeepsTheChain()
    {
        SQLException failure = new SQLException("batch failed", "22001");
        SQLException next = new SQLException("row 2", "22001");
        failure.setNextException(next);
        SinkException translated = SqlFailures.translate(failure, "Cannot apply changes to \"s\".\"t\"");
        assertThat(translated.errorCode()).isEqualTo(ErrorCode.DATA);
        assertThat(translated).hasMessage("Cannot apply changes to \"s\".\"t\": batch failed [SQLState 22001]");
        assertThat(translated.getCause()).isInstanceOf(SQLException.class).hasMessage("SQLException: SQLState 22001: batch failed");
        assertThat(((SQLException) translated.getCause()).getSQLState()).isEqualTo("22001");
        assertThat(translated.getCause().getStackTrace()).isEqualTo(failure.getStackTrace());
        assertThat(translated.getSuppressed()).singleElement().satisfies(suppressed -> assertThat(suppressed).hasMessage("SQLException: SQLState 22001: row 2"));
    }

    @Test
    void sanitizedFailuresCarryNoValues()
    {
        PSQLException copy = server("23514", "new row for relation \"t\" violates check constraint \"t_c_check\"", "COPY t, line 1, column c: \"secret\"");
        SQLException sanitized = SqlFailures.sanitized(copy);
        assertThat(sanitized.getMessage()).isEqualTo("PSQLException: SQLState 23514: new row for relation \"t\" violates check constraint \"t_c_check\" (COPY t, line 1, column c)");
        assertThat(sanitized.getSQLState()).isEqualTo("23514");
        assertThat(copy.getMessage()).as("pgjdbc's own message, with server detail on").contains("secret");
        SQLException wrapped = new SQLException("outer", "08006", copy);
        assertThat(SqlFailures.sanitized(wrapped).getCause()).hasMessageNotContaining("secret");
        assertThat(SqlFailures.column(copy)).isEqualTo("c");
        PSQLException notNull = new PSQLException(new ServerErrorMessage("SERROR\0C23502\0Mnull value in column \"n\" of relation \"t\" violates not-null constraint\0Dfailing row contains (secret)\0cn\0"));
        assertThat(SqlFailures.column(notNull)).isEqualTo("n");
    }

    private static PSQLException server(String state, String message, String where)
    {
        StringBuilder fields = new StringBuilder("SERROR\0C").append(state).append("\0M").append(message).append("\0Dfailing row contains (secret)\0");
        if (where != null) {
            fields.append("W").append(where).append('\0');
        }
        return new PSQLException(new ServerErrorMessage(fields.toString()));
    }
}
