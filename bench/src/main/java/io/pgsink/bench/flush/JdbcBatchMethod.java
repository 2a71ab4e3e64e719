package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;

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
        Columns columns = workload.columns;
        StringBuilder set = new StringBuilder();
        for (String name : columns.names.subList(1, columns.size())) {
            set.append(set.length() == 0 ? "" : ", ").append(name).append(" = ?");
        }
        try (Connection connection = database.connect(true);
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + table + " ("
                        + columns.nameList() + ") VALUES (" + "?, ".repeat(columns.size() - 1) + "?)");
                PreparedStatement update = connection.prepareStatement("UPDATE " + table + " SET " + set
                        + " WHERE id = ?");
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
                    case INSERT -> columns.bind(insert, change.row(), 0, 1);
                    case UPDATE -> {
                        columns.bind(update, change.row(), 1, 1);
                        update.setLong(columns.size(), change.key());
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
}
