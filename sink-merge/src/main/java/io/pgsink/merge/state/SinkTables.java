package io.pgsink.merge.state;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.merge.dialect.Dialect;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The DDL of the tables pgsink keeps for itself in the target, one definition for every dialect:
 * the dialect adds only how the table is distributed.
 */
final class SinkTables
{
    private SinkTables() {}

    /**
     * Runs {@code createTable} (a {@code CREATE TABLE IF NOT EXISTS}) in a transaction of its own.
     * Several sinks or tasks may start at once: {@code CREATE TABLE IF NOT EXISTS} is not atomic,
     * and the loser fails on the catalog's unique index, or finds the row type taken; the table
     * exists then.
     */
    static void create(Connection connection, String createTable)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(createTable);
            connection.commit();
        }
        catch (SQLException e) {
            String state = e.getSQLState();
            if (!SqlFailures.UNIQUE_VIOLATION.equals(state) && !SqlFailures.DUPLICATE_TABLE.equals(state)
                    && !SqlFailures.DUPLICATE_OBJECT.equals(state)) {
                throw e;
            }
            connection.rollback();
        }
    }

    /** The offsets table: one row per sink and source partition, keyed (and distributed) by both. */
    static String offsetsTable(String qualifiedName, Dialect dialect)
    {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedName
                + " (sink_name text NOT NULL, source_partition text NOT NULL, source_offset text NOT NULL, "
                + "updated_at timestamp with time zone NOT NULL, PRIMARY KEY (sink_name, source_partition))"
                + dialect.distribution().distributedBy(List.of("sink_name", "source_partition"));
    }

    /**
     * The initial load's progress ({@link LoadProgressStore}): one row per sink, source table and
     * chunk loaded, plus the rows that mark the load started ({@code chunk = -1}) and complete
     * ({@code chunk = -2}).
     */
    static String initialLoadTable(String qualifiedName, Dialect dialect)
    {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedName
                + " (sink_name text NOT NULL, source_schema text NOT NULL, source_table text NOT NULL, "
                + "chunk integer NOT NULL, chunks integer NOT NULL, rows_loaded bigint NOT NULL, "
                + "bytes_loaded bigint NOT NULL, load_lsn text NOT NULL, load_snapshot text NOT NULL, "
                + "loaded_at timestamp with time zone NOT NULL, "
                + "PRIMARY KEY (sink_name, source_schema, source_table, chunk))"
                + dialect.distribution().distributedBy(List.of("sink_name", "source_schema", "source_table", "chunk"));
    }

    /**
     * The rows primary-key changes moved away ({@link MovedRows}): one per sink, target table, old
     * key and source commit time, until the create of the new key takes it.
     */
    static String movedRowsTable(String qualifiedName, Dialect dialect)
    {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedName
                + " (sink_name text NOT NULL, target_table text NOT NULL, old_key text NOT NULL, "
                + "source_time_ms bigint NOT NULL, column_names text[] NOT NULL, column_values text[] NOT NULL, "
                + "moved_at timestamp with time zone NOT NULL, "
                + "PRIMARY KEY (sink_name, target_table, old_key, source_time_ms))"
                + dialect.distribution().distributedBy(
                        List.of("sink_name", "target_table", "old_key", "source_time_ms"));
    }

    /**
     * The dead-letter table ({@link DeadLetterTable}): no key, so randomly distributed where tables are distributed.
     */
    static String deadLetterTable(String qualifiedName, Dialect dialect)
    {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedName + " (sink_name text NOT NULL, source_table text NOT NULL, "
                + "target_table text NOT NULL, row_key text NOT NULL, source_partition text NOT NULL, "
                + "source_offset text NOT NULL, column_name text, reason text NOT NULL, row_values text, "
                + "rejected_at timestamp with time zone NOT NULL DEFAULT now())"
                + dialect.distribution().distributedBy(List.of());
    }

    /**
     * The standalone service's reading of the captured source tables ({@link SourceTableStore}):
     * one row per sink and source table oid.
     */
    static String sourceTablesTable(String qualifiedName, Dialect dialect)
    {
        return "CREATE TABLE IF NOT EXISTS " + qualifiedName
                + " (sink_name text NOT NULL, table_oid bigint NOT NULL, source_schema text NOT NULL, "
                + "source_table text NOT NULL, partitioned boolean NOT NULL, parent_oid bigint NOT NULL, "
                + "partition_bound text, identity_without_key boolean NOT NULL, "
                + "read_at timestamp with time zone NOT NULL, PRIMARY KEY (sink_name, table_oid))"
                + dialect.distribution().distributedBy(List.of("sink_name", "table_oid"));
    }
}
