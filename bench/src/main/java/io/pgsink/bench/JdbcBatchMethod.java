package io.pgsink.bench;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * What a generic JDBC sink does: events in order, an INSERT, UPDATE or DELETE statement per event,
 * sent with {@code executeBatch} ({@code reWriteBatchedInserts=true} turns runs of inserts into
 * multi-row inserts). A batch is sent whenever the statement kind changes, since order matters.
 * (An upsert statement for inserts and updates cannot be rewritten: a multi-row {@code INSERT ...
 * ON CONFLICT DO UPDATE} fails when it touches one key twice.)
 */
final class JdbcBatchMethod
        implements Method
{
    @Override
    public String name()
    {
        return "JDBC executeBatch (rewrite)";
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException
    {
        try (Connection connection = database.connect(true);
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " (id, qty, label, price, active) VALUES (?, ?, ?, ?, ?)");
                PreparedStatement update = connection.prepareStatement("UPDATE " + table + " SET qty = ?, label = ?, price = ?, active = ? WHERE id = ?");
                PreparedStatement delete = connection.prepareStatement("DELETE FROM " + table + " WHERE id = ?");
                Offsets offsets = new Offsets(connection)) {
            connection.setAutoCommit(false);
            int inBatch = 0;
            PreparedStatement pending = null;
            long offset = 0;
            for (Workload.Change change : workload.changes) {
                offset++;
                PreparedStatement statement = switch (change.kind()) {
                    case INSERT -> insert;
                    case UPDATE -> update;
                    case DELETE -> delete;
                };
                if (pending != null && pending != statement) {
                    pending.executeBatch();
                }
                pending = statement;
                switch (change.kind()) {
                    case INSERT -> bindRow(insert, change.row(), 1);
                    case UPDATE -> {
                        Object[] row = change.row();
                        update.setInt(1, (Integer) row[1]);
                        update.setString(2, (String) row[2]);
                        update.setBigDecimal(3, (BigDecimal) row[3]);
                        update.setBoolean(4, (Boolean) row[4]);
                        update.setLong(5, change.key());
                    }
                    case DELETE -> delete.setLong(1, change.key());
                }
                statement.addBatch();
                if (++inBatch == batchSize) {
                    pending.executeBatch();
                    pending = null;
                    offsets.store(offset);
                    connection.commit();
                    inBatch = 0;
                }
            }
            if (pending != null) {
                pending.executeBatch();
            }
            offsets.store(offset);
            connection.commit();
        }
    }

    static void bindRow(PreparedStatement statement, Object[] row, int first)
            throws SQLException
    {
        statement.setLong(first, (Long) row[0]);
        statement.setInt(first + 1, (Integer) row[1]);
        statement.setString(first + 2, (String) row[2]);
        statement.setBigDecimal(first + 3, (BigDecimal) row[3]);
        statement.setBoolean(first + 4, (Boolean) row[4]);
    }
}
