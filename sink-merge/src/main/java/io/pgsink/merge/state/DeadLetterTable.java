package io.pgsink.merge.state;

import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.change.TableSchema;
import io.pgsink.merge.dialect.Dialect;
import org.jetbrains.annotations.Nullable;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * Writes rows skipped under {@code errors.tolerance=all} into a table in the target, in the same
 * transaction as the rest of their batch and its positions: a row is either applied or
 * dead-lettered, never lost. The table holds the row's values (as JSON text) so that an operator
 * can repair and replay it; they are never logged.
 */
public final class DeadLetterTable
{
    private final String sinkName;
    private final String qualifiedName;

    public DeadLetterTable(String sinkName, String qualifiedName)
    {
        this.sinkName = sinkName;
        this.qualifiedName = qualifiedName;
    }

    public void write(Connection connection, Dialect dialect, List<RejectedRow> rows)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(SinkTables.deadLetterTable(qualifiedName, dialect));
        }
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + qualifiedName
                + " (sink_name, source_table, target_table, row_key, source_partition, source_offset, column_name, "
                + "reason, row_values) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            for (RejectedRow row : rows) {
                insert.setString(1, sinkName);
                insert.setString(2, row.table().toString());
                insert.setString(3, row.target().toString());
                insert.setString(4, row.change().key().toString());
                insert.setString(5, row.change().position().partition());
                insert.setString(6, row.change().position().offset());
                insert.setString(7, row.column().orElse(null));
                insert.setString(8, row.reason());
                insert.setString(9, json(row.schema(), row.change().row()));
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    /**
     * The row as a JSON object of column name to text value; NUL characters are escaped, so it always fits a text
     * column.
     */
    @Nullable
    static String json(TableSchema schema, Object @Nullable [] row)
    {
        if (row == null) {
            return null;
        }
        StringBuilder json = new StringBuilder("{");
        for (int i = 0; i < row.length; i++) {
            if (i > 0) {
                json.append(", ");
            }
            string(json, schema.columns().get(i).name());
            json.append(": ");
            Object value = row[i];
            if (value == null) {
                json.append("null");
            }
            else if (value instanceof byte[] bytes) {
                string(json, hex(bytes));
            }
            else if (value instanceof ByteBuffer buffer) {
                byte[] bytes = new byte[buffer.remaining()];
                buffer.duplicate().get(bytes);
                string(json, hex(bytes));
            }
            else {
                string(json, String.valueOf(value));
            }
        }
        return json.append('}').toString();
    }

    private static String hex(byte[] bytes)
    {
        StringBuilder hex = new StringBuilder("\\x");
        for (byte b : bytes) {
            hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return hex.toString();
    }

    private static void string(StringBuilder json, String value)
    {
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                case '\n' -> json.append("\\n");
                case '\r' -> json.append("\\r");
                case '\t' -> json.append("\\t");
                default -> {
                    if (c < 0x20) {
                        json.append(String.format("\\u%04x", (int) c));
                    }
                    else {
                        json.append(c);
                    }
                }
            }
        }
        json.append('"');
    }
}
