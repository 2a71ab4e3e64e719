package io.pgsink.merge.state;

import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.plan.TablePlans;
import io.pgsink.merge.table.Statements;
import org.jetbrains.annotations.Nullable;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

import static java.util.Objects.requireNonNull;

/**
 * The rows that primary-key changes moved away, kept for the creates of the new keys
 * ({@value #TABLE} in {@code offsets.schema}). Debezium writes a key change as a delete of the old
 * key and a create of the new one, whose unchanged TOASTed columns carry a placeholder: their
 * values are the old row's. Through Kafka the two travel on the partitions of their keys and may
 * reach different tasks in either order, so the delete is applied at once and, in the same
 * transaction, the old row's values as the target held them (every column, as text) are saved
 * here under the table, the old key and the change's source commit time ({@link #write}). The
 * create, in whichever task, takes the values from here ({@link #find}) and its flush deletes the
 * saved row. A saved row no create took (its create came in the same flush as its delete, or
 * failed) is deleted after a while ({@link #prune}).
 *
 * <p>Keys are named by {@link #keyText} (the values the records carry, as text), on both sides.
 *
 * <p>Not thread-safe: {@link #write} runs on the sink's applier thread, the rest on the task's.
 */
public final class MovedRows
{
    public static final String TABLE = "pgsink_moved_rows";

    /** A primary-key change: the target table, the old key, and the source commit time (0 when unknown). */
    public record Move(TableId table, RowKey oldKey, long sourceTimeMillis)
    {
        public Move
        {
            requireNonNull(table, "table is null");
            requireNonNull(oldKey, "oldKey is null");
        }
    }

    /** Which moved rows a flush saves, and which saved rows its creates took. */
    public interface Moves
    {
        /**
         * The key changes of the batch whose old rows are to be saved: their deletes are in it, their creates are not.
         */
        List<Move> saved(Batch batch);

        /** The saved rows the creates of the batch took. */
        List<Move> taken(Batch batch);
    }

    /**
     * A saved old row: its column names and their values as text (null for NULL), in the same
     * order; {@code move} names it as saved (to delete it once taken).
     */
    public record SavedRow(Move move, List<String> columns, List<@Nullable String> values)
    {
        public SavedRow
        {
            requireNonNull(move, "move is null");
            requireNonNull(columns, "columns is null");
            requireNonNull(values, "values is null");
        }
    }

    private final String sinkName;
    private final String qualifiedTable;
    private final CopyFormat format;

    public MovedRows(SinkConfig config)
    {
        this.sinkName = config.sinkName();
        this.qualifiedTable = SqlIdentifiers.qualified(config.offsetsSchema(), TABLE);
        this.format = config.copyFormat();
    }

    /** Creates the table unless it exists, in a transaction of its own. */
    public void createTable(Connection connection, Dialect dialect)
            throws SQLException
    {
        SinkTables.create(connection, SinkTables.movedRowsTable(qualifiedTable, dialect));
    }

    /**
     * In the flush's transaction, before its tables are written: saves the old rows of the
     * batch's key changes, as the target holds them, and deletes the saved rows its creates took.
     */
    public void write(Connection connection, Batch batch, Moves moves, TablePlans plans)
            throws SQLException
    {
        List<Move> saved = moves.saved(batch);
        if (!saved.isEmpty()) {
            Map<TableId, TableBatch> tables = new HashMap<>();
            batch.tables().forEach(table -> tables.put(table.table(), table));
            for (Move move : saved) {
                TableBatch table = tables.get(move.table());
                if (table != null && !table.changes().isEmpty() && table.schema().isPresent()) {
                    TablePlan plan = plans.planned(move.table());
                    if (!plan.appendOnly && !plan.history) {
                        save(connection, plan, move);
                    }
                }
            }
        }
        List<Move> taken = moves.taken(batch);
        if (!taken.isEmpty()) {
            try (PreparedStatement statement = connection.prepareStatement(
                    "DELETE FROM " + qualifiedTable
                            + " WHERE sink_name = ? AND target_table = ? AND old_key = ? AND source_time_ms = ?")) {
                for (Move move : taken) {
                    bindMove(statement, 1, move);
                    statement.addBatch();
                }
                statement.executeBatch();
            }
        }
    }

    /**
     * Saves the old row of {@code move}, when the target has it: a flush that writes the row again
     * (a batch applied again after its commit was lost) finds it gone and keeps what was saved.
     */
    private void save(Connection connection, TablePlan plan, Move move)
            throws SQLException
    {
        List<String> keyColumns = plan.target.primaryKey();
        StringJoiner where = new StringJoiner(" AND ");
        List<String> keyTexts = new ArrayList<>(keyColumns.size());
        for (int i = 0; i < keyColumns.size(); i++) {
            int keyPosition = plan.fillKeyPosition[i];
            int keyColumn = plan.source.keyIndex(keyPosition);
            Object value = move.oldKey().value(keyPosition);
            if (value == null) {
                return;
            }
            where.add("t." + SqlIdentifiers.quote(keyColumns.get(i)) + " = CAST(? AS "
                    + plan.columns.get(keyColumn).declaredType() + ")");
            keyTexts.add(text(plan, keyColumn, value));
        }
        StringJoiner values = new StringJoiner(", ", "ARRAY[", "]::text[]");
        List<String> names = new ArrayList<>(plan.sourceColumns);
        for (int column = 0; column < plan.sourceColumns; column++) {
            String name = plan.columns.get(column).name();
            names.add(plan.source.columns().get(column).name());
            values.add("t." + SqlIdentifiers.quote(name) + "::text");
        }
        String target = Statements.qualified(plan.target.id());
        String oldRow = " FROM " + target + " t WHERE " + where;
        try (PreparedStatement replace = connection.prepareStatement("DELETE FROM " + qualifiedTable
                + " WHERE sink_name = ? AND target_table = ? AND old_key = ? AND source_time_ms = ? AND EXISTS "
                + "(SELECT 1" + oldRow + ")");
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + qualifiedTable
                        + " (sink_name, target_table, old_key, source_time_ms, column_names, column_values, moved_at) "
                        + "SELECT ?, ?, ?, ?, ?, " + values + ", now()" + oldRow)) {
            int parameter = bindMove(replace, 1, move);
            for (String keyText : keyTexts) {
                replace.setString(parameter++, keyText);
            }
            replace.executeUpdate();
            parameter = bindMove(insert, 1, move);
            insert.setArray(parameter++, connection.createArrayOf("text", names.toArray()));
            for (String keyText : keyTexts) {
                insert.setString(parameter++, keyText);
            }
            insert.executeUpdate();
        }
    }

    /**
     * The saved rows of {@code moves} that the target holds, in the connection's transaction
     * (which the caller ends): of the old key, the one of the same source commit time, else the
     * newest (the two halves of a key change carry the same time as Debezium writes them; a
     * source that stamps them apart still finds the row).
     */
    public Map<Move, SavedRow> find(Connection connection, Collection<Move> moves)
            throws SQLException
    {
        Map<Move, SavedRow> found = new HashMap<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT source_time_ms, column_names, "
                + "column_values FROM " + qualifiedTable
                + " WHERE sink_name = ? AND target_table = ? AND old_key = ? ORDER BY source_time_ms = ? DESC, "
                + "moved_at DESC LIMIT 1")) {
            for (Move move : moves) {
                bindMove(statement, 1, move);
                try (ResultSet rows = statement.executeQuery()) {
                    if (rows.next()) {
                        Move saved = new Move(move.table(), move.oldKey(), rows.getLong(1));
                        found.put(move, new SavedRow(saved, Arrays.asList((String[]) rows.getArray(2).getArray()),
                                Arrays.asList((String[]) rows.getArray(3).getArray())));
                    }
                }
            }
        }
        return found;
    }

    /** Deletes this sink's saved rows older than {@code seconds}; returns how many. */
    public int prune(Connection connection, long seconds)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(
                "DELETE FROM " + qualifiedTable + " WHERE sink_name = ? AND moved_at < now() - CAST(? AS interval)")) {
            statement.setString(1, sinkName);
            statement.setString(2, seconds + " seconds");
            return statement.executeUpdate();
        }
    }

    private int bindMove(PreparedStatement statement, int first, Move move)
            throws SQLException
    {
        int parameter = first;
        statement.setString(parameter++, sinkName);
        statement.setString(parameter++, move.table().toString());
        statement.setString(parameter++, keyText(move.oldKey()));
        statement.setLong(parameter++, move.sourceTimeMillis());
        return parameter;
    }

    /** A key as the records name it: its values as text, bytes in hex, separated by commas (escaped in values). */
    public static String keyText(RowKey key)
    {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < key.size(); i++) {
            if (i > 0) {
                text.append(',');
            }
            Object value = key.value(i);
            String part;
            if (value == null) {
                part = "\\N";
            }
            else if (value instanceof byte[] bytes) {
                part = "\\x" + HexFormat.of().formatHex(bytes);
            }
            else if (value instanceof ByteBuffer buffer) {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.duplicate().get(bytes);
                part = "\\x" + HexFormat.of().formatHex(bytes);
            }
            else {
                part = value.toString();
            }
            text.append(part.replace("\\", "\\\\").replace(",", "\\,"));
        }
        return text.toString();
    }

    /** The text form of a key value as COPY would write it into {@code column}, for a cast to the column's type. */
    private String text(TablePlan plan, int column, Object value)
            throws SQLException
    {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CsvWriter writer = new CsvWriter(format, bytes::write, 1024);
        plan.encoders[column].encode(value, writer);
        writer.endRow();
        writer.finish();
        String field = bytes.toString(StandardCharsets.UTF_8);
        int end = field.length();
        while (end > 0 && (field.charAt(end - 1) == '\n' || field.charAt(end - 1) == '\r')) {
            end--;
        }
        field = field.substring(0, end);
        char quote = format.quote();
        if (field.length() >= 2 && field.charAt(0) == quote && field.charAt(field.length() - 1) == quote) {
            field = field.substring(1, field.length() - 1).replace(String.valueOf(format.escape()) + quote,
                    String.valueOf(quote));
        }
        return field;
    }
}
