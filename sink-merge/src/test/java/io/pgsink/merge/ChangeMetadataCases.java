package io.pgsink.merge;

import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Metadata columns, soft deletes and history tables, on every target of the merge suite
 * ({@link AbstractMergeTest} implements it): PostgreSQL with {@code MERGE}, PostgreSQL with
 * delete-insert, and the Greenplum dialect's statements.
 */
interface ChangeMetadataCases
{
    long COMMITTED_AT = 1_700_000_000_000L;

    TestingSchema suiteSchema();

    BufferedSink suiteSink(Map<String, String> overrides);

    void suiteTable(String name, String definitions)
            throws SQLException;

    /** Whether the suite's sink user may UPDATE and ALTER its tables, which soft deletes and added metadata columns need. */
    default boolean suiteMayUpdate()
    {
        return true;
    }

    private static SourcePosition position(long lsn)
    {
        return new SourcePosition("{\"server\":\"src\"}", "{\"lsn\":" + lsn + "}");
    }

    private static Map<String, String> metadata(Map<String, String> more)
    {
        Map<String, String> properties = new HashMap<>(Map.of(
                SinkConfig.METADATA_OPERATION_COLUMN, "_op",
                SinkConfig.METADATA_SOURCE_TIMESTAMP_COLUMN, "_committed_at",
                SinkConfig.METADATA_SOURCE_POSITION_COLUMN, "_position",
                SinkConfig.METADATA_APPLIED_TIMESTAMP_COLUMN, "_applied_at"));
        properties.putAll(more);
        return properties;
    }

    @Test
    default void metadataColumnsAreAddedAndWritten()
            throws SQLException
    {
        assumeTrue(suiteMayUpdate(), "the sink user may not ALTER the table");
        suiteTable("meta", "id int PRIMARY KEY, v text");
        TableSchema meta = TableSchema.of(TableId.of("src", "meta"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = suiteSink(metadata(Map.of(SinkConfig.SINK_NAME, "meta", SinkConfig.SCHEMA_EVOLUTION, "add-columns")))) {
            sink.accept(ChangeEvent.insert(meta, new Object[] {1, "a"}, position(1), COMMITTED_AT));
            sink.accept(ChangeEvent.insert(meta, new Object[] {2, "b"}, position(2), COMMITTED_AT));
            sink.accept(ChangeEvent.insert(meta, new Object[] {3, "c"}, position(3), 0));
            sink.flush();
            sink.accept(ChangeEvent.update(meta, null, new Object[] {1, "a2"}, position(4), COMMITTED_AT + 1000));
            sink.accept(ChangeEvent.delete(meta, new Object[] {2, null}, position(5), COMMITTED_AT + 2000));
            sink.flush();
        }
        assertThat(TestingSink.query(suiteSchema(), "SELECT id, v, _op, extract(epoch FROM _committed_at)::bigint, _position FROM meta ORDER BY id")).containsExactly(
                List.of("1", "a2", "u", "1700000001", "{\"server\":\"src\"}:{\"lsn\":4}"),
                Arrays.asList("3", "c", "c", null, "{\"server\":\"src\"}:{\"lsn\":3}"));
        // one apply time per flush, from the sink's clock, within the test's time
        assertThat(TestingSink.query(suiteSchema(), "SELECT count(DISTINCT _applied_at), bool_and(_applied_at BETWEEN now() - interval '10 minutes' AND now() + interval '1 minute') FROM meta"))
                .containsExactly(List.of("2", "t"));
        assertThat(TestingSink.query(suiteSchema(), "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'meta'::regclass AND attname LIKE '\\_%' ORDER BY attnum"))
                .containsExactly(List.of("text"), List.of("timestamp with time zone"), List.of("text"), List.of("timestamp with time zone"));
    }

    @Test
    default void missingMetadataColumnIsNamed()
            throws SQLException
    {
        suiteTable("meta_missing", "id int PRIMARY KEY, v text, _op text");
        TableSchema source = TableSchema.of(TableId.of("src", "meta_missing"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = suiteSink(metadata(Map.of(SinkConfig.SINK_NAME, "meta_missing")))) {
            sink.accept(ChangeEvent.insert(source, new Object[] {1, "a"}, position(1), COMMITTED_AT));
            assertThatThrownBy(sink::flush)
                    .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                    .hasMessageContaining("meta_missing")
                    .hasMessageContaining("has no metadata column _committed_at (timestamptz)")
                    .hasMessageContaining("has no metadata column _position (text)")
                    .hasMessageContaining("schema.evolution=add-columns");
        }
    }

    @Test
    default void softDeleteKeepsTheRowAndAReinsertClearsIt()
            throws SQLException
    {
        softDeletes("soft", Map.of());
    }

    @Test
    default void softDeleteByDeleteAndInsert()
            throws SQLException
    {
        softDeletes("soft_delete_insert", Map.of(SinkConfig.TARGET_UPDATE_MODE, "delete-insert"));
    }

    @Test
    default void softDeleteWithoutUpdatePrivilegeIsRefused()
            throws SQLException
    {
        assumeFalse(suiteMayUpdate(), "the sink user may UPDATE the table");
        suiteTable("soft_no_update", "id int PRIMARY KEY, v text, _deleted boolean NOT NULL DEFAULT false");
        TableSchema source = TableSchema.of(TableId.of("src", "soft_no_update"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = suiteSink(Map.of(SinkConfig.SINK_NAME, "soft_no_update", SinkConfig.DELETE_MODE, "soft", SinkConfig.DELETE_FLAG_COLUMN, "_deleted"))) {
            // marking deleted rows needs UPDATE: the first flush says so, before any delete comes
            sink.accept(ChangeEvent.insert(source, new Object[] {1, "a"}, position(1), COMMITTED_AT));
            sink.accept(ChangeEvent.delete(source, new Object[] {2, null}, position(2), COMMITTED_AT));
            assertThatThrownBy(sink::flush).isInstanceOf(SinkException.class).hasMessageContaining("soft_no_update").hasMessageContaining("permission denied");
        }
    }

    private void softDeletes(String table, Map<String, String> more)
            throws SQLException
    {
        assumeTrue(suiteMayUpdate(), "the sink user may not UPDATE the table");
        suiteTable(table, "id int PRIMARY KEY, v text, big text, _op text, _deleted boolean NOT NULL DEFAULT false, _deleted_at timestamptz");
        TableSchema soft = TableSchema.of(TableId.of("src", table), List.of("id", "v", "big"), List.of("id"));
        Map<String, String> properties = new HashMap<>(Map.of(SinkConfig.SINK_NAME, table, SinkConfig.DELETE_MODE, "soft", SinkConfig.METADATA_OPERATION_COLUMN, "_op",
                SinkConfig.DELETE_FLAG_COLUMN, "_deleted", SinkConfig.DELETE_TIMESTAMP_COLUMN, "_deleted_at"));
        properties.putAll(more);
        try (BufferedSink sink = suiteSink(properties)) {
            for (int id = 1; id <= 4; id++) {
                sink.accept(ChangeEvent.insert(soft, new Object[] {id, "v" + id, "toasted " + id}, position(id), COMMITTED_AT));
            }
            sink.flush();
            sink.accept(ChangeEvent.delete(soft, new Object[] {1, null, null}, position(10), COMMITTED_AT + 5000));
            // a key change: the old key is soft-deleted, the new row takes its unchanged TOAST value from the old key's row
            sink.accept(ChangeEvent.update(soft, new Object[] {2, null, null}, new Object[] {20, "moved", UnavailableValue.INSTANCE}, position(11), COMMITTED_AT));
            // deleted and inserted again in one batch: a row as any other
            sink.accept(ChangeEvent.delete(soft, new Object[] {3, null, null}, position(12), COMMITTED_AT));
            sink.accept(ChangeEvent.insert(soft, new Object[] {3, "back", "again"}, position(13), COMMITTED_AT));
            sink.flush();
            assertThat(TestingSink.query(suiteSchema(), "SELECT id, v, big, _op, _deleted, extract(epoch FROM _deleted_at)::bigint FROM " + table + " ORDER BY id")).containsExactly(
                    List.of("1", "v1", "toasted 1", "d", "t", "1700000005"),
                    List.of("2", "v2", "toasted 2", "d", "t", "1700000000"),
                    Arrays.asList("3", "back", "again", "c", "f", null),
                    Arrays.asList("4", "v4", "toasted 4", "c", "f", null),
                    Arrays.asList("20", "moved", "toasted 2", "u", "f", null));
            // a later insert of a soft-deleted key writes the row anew and clears the marks; an update of a kept row fills from it
            sink.accept(ChangeEvent.insert(soft, new Object[] {1, "reborn", "new big"}, position(20), COMMITTED_AT));
            sink.accept(ChangeEvent.update(soft, null, new Object[] {4, "v4b", UnavailableValue.INSTANCE}, position(21), COMMITTED_AT));
            sink.accept(ChangeEvent.delete(soft, new Object[] {99, null, null}, position(22), COMMITTED_AT));
            sink.flush();
        }
        assertThat(TestingSink.query(suiteSchema(), "SELECT id, v, big, _op, _deleted, _deleted_at FROM " + table + " WHERE id IN (1, 4, 99) ORDER BY id")).containsExactly(
                Arrays.asList("1", "reborn", "new big", "c", "f", null),
                Arrays.asList("4", "v4b", "toasted 4", "u", "f", null));
    }

    @Test
    default void historyAppendsEveryChange()
            throws SQLException
    {
        TableSchema history = TableSchema.of(TableId.of("src", "hist"), List.of("id", "v"), List.of("id"));
        // no primary key: a history holds many rows per key
        suiteTable("hist", "id int NOT NULL, v text, _op text, _position text");
        TableSchema merged = TableSchema.of(TableId.of("src", "hist_merged"), List.of("id", "v"), List.of("id"));
        suiteTable("hist_merged", "id int PRIMARY KEY, v text, _op text, _position text");
        try (BufferedSink sink = suiteSink(Map.of(SinkConfig.SINK_NAME, "hist", SinkConfig.HISTORY_TABLE_INCLUDE_LIST, "src\\.hist",
                SinkConfig.METADATA_OPERATION_COLUMN, "_op", SinkConfig.METADATA_SOURCE_POSITION_COLUMN, "_position"))) {
            sink.accept(ChangeEvent.insert(history, new Object[] {1, "a"}, position(1), COMMITTED_AT));
            sink.accept(ChangeEvent.update(history, null, new Object[] {1, "b"}, position(2), COMMITTED_AT));
            sink.accept(ChangeEvent.insert(merged, new Object[] {1, "a"}, position(3), COMMITTED_AT));
            sink.accept(ChangeEvent.update(history, null, new Object[] {1, "c"}, position(4), COMMITTED_AT));
            sink.flush();
            // truncates do not empty a history; a key change ends the old key's history
            sink.accept(ChangeEvent.truncate(history.table(), position(5), COMMITTED_AT));
            sink.accept(ChangeEvent.update(history, new Object[] {1, null}, new Object[] {2, "d"}, position(6), COMMITTED_AT));
            sink.accept(ChangeEvent.update(history, null, new Object[] {2, UnavailableValue.INSTANCE}, position(7), COMMITTED_AT));
            sink.accept(ChangeEvent.delete(history, new Object[] {2, null}, position(8), COMMITTED_AT));
            sink.accept(ChangeEvent.update(merged, null, new Object[] {1, "b"}, position(9), COMMITTED_AT));
            sink.flush();
        }
        assertThat(TestingSink.query(suiteSchema(), "SELECT id, v, _op, _position FROM hist ORDER BY substring(_position FROM '\"lsn\":(\\d+)')::int, _op")).containsExactly(
                List.of("1", "a", "c", "{\"server\":\"src\"}:{\"lsn\":1}"),
                List.of("1", "b", "u", "{\"server\":\"src\"}:{\"lsn\":2}"),
                List.of("1", "c", "u", "{\"server\":\"src\"}:{\"lsn\":4}"),
                Arrays.asList("1", null, "d", "{\"server\":\"src\"}:{\"lsn\":6}"),
                List.of("2", "d", "u", "{\"server\":\"src\"}:{\"lsn\":6}"),
                List.of("2", "d", "u", "{\"server\":\"src\"}:{\"lsn\":7}"),
                Arrays.asList("2", null, "d", "{\"server\":\"src\"}:{\"lsn\":8}"));
        // the other table is merged as before
        assertThat(TestingSink.query(suiteSchema(), "SELECT id, v, _op FROM hist_merged")).containsExactly(List.of("1", "b", "u"));
    }

    @Test
    default void historyRefusesATargetKeyedBySourceKey()
            throws SQLException
    {
        suiteTable("hist_keyed", "id int PRIMARY KEY, v text, _op text, _position text");
        TableSchema source = TableSchema.of(TableId.of("src", "hist_keyed"), List.of("id", "v"), List.of("id"));
        try (BufferedSink sink = suiteSink(Map.of(SinkConfig.SINK_NAME, "hist_keyed", SinkConfig.TABLE_MODE, "history",
                SinkConfig.METADATA_OPERATION_COLUMN, "_op", SinkConfig.METADATA_SOURCE_POSITION_COLUMN, "_position"))) {
            sink.accept(ChangeEvent.insert(source, new Object[] {1, "a"}, position(1), COMMITTED_AT));
            assertThatThrownBy(sink::flush)
                    .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                    .hasMessageContaining("hist_keyed")
                    .hasMessageContaining("primary key [id] would allow one row per key")
                    .hasMessageContaining("(id, _position)");
        }
    }
}
