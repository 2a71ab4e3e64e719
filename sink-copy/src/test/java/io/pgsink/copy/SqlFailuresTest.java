package io.pgsink.copy;

import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;
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
        for (String state : new String[] {"28P01", "3D000", "42501", "42P01", "23505", "22001", "XX000"}) {
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
        assertThat(SqlFailures.classify(new SQLException("denied", "42501"))).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
        assertThat(SqlFailures.classify(new SQLException("no state"))).isEqualTo(ErrorCode.SCHEMA_MISMATCH);
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
        assertThat(translated).hasMessage("Cannot apply changes to \"s\".\"t\": batch failed [SQLState 22001]").hasCause(failure);
        assertThat(translated.getSuppressed()).containsExactly(next);
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
