package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The best plain-JDBC competitor: each batch merged by key first (last change wins, as pgsink and
 * the Debezium JDBC sink's reduction buffer do), then one {@code DELETE ... WHERE id = ANY(?)} for
 * the deleted keys and multi-row {@code INSERT ... ON CONFLICT DO UPDATE} statements of up to
 * {@value #ROWS_PER_STATEMENT} rows for the rest.
 */
final class MergedUpsertMethod
        implements Method
{
    static final int ROWS_PER_STATEMENT = 1000;
    static final String NAME = "merged INSERT ON CONFLICT + DELETE";

    private final boolean lz4;

    MergedUpsertMethod()
    {
        this(false);
    }

    /**
     * @param lz4 whether the session TOASTs with lz4, as pgsink's does by default ({@code target.toast.compression}):
     * the same compression for both
     */
    MergedUpsertMethod(boolean lz4)
    {
        this.lz4 = lz4;
    }

    @Override
    public String name()
    {
        return lz4 ? NAME + ", lz4" : NAME;
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException
    {
        try (Connection connection = database.connect(false);
                PreparedStatement upsert = connection.prepareStatement(upsertSql(table, workload.columns,
                        ROWS_PER_STATEMENT));
                PreparedStatement delete = connection.prepareStatement("DELETE FROM " + table + " WHERE id = ANY(?)");
                Offsets offsets = new Offsets(connection)) {
            if (lz4) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET default_toast_compression = lz4");
                }
            }
            connection.setAutoCommit(false);
            Map<Long, Workload.Change> merged = new LinkedHashMap<>();
            long offset = 0;
            for (Workload.Change change : workload.changes) {
                merged.put(change.key(), change);
                if (++offset % batchSize == 0) {
                    flush(connection, table, workload.columns, merged, upsert, delete);
                    offsets.store(offset);
                    connection.commit();
                }
            }
            flush(connection, table, workload.columns, merged, upsert, delete);
            offsets.store(offset);
            connection.commit();
        }
    }

    private static void flush(Connection connection, String table, Columns columns, Map<Long, Workload.Change> merged,
            PreparedStatement upsert, PreparedStatement delete)
            throws SQLException
    {
        List<Long> deletes = new ArrayList<>();
        List<Object[]> rows = new ArrayList<>();
        for (Workload.Change change : merged.values()) {
            if (change.kind() == Workload.Kind.DELETE) {
                deletes.add(change.key());
            }
            else {
                rows.add(change.row());
            }
        }
        merged.clear();
        if (!deletes.isEmpty()) {
            delete.setArray(1, connection.createArrayOf("bigint", deletes.toArray()));
            delete.executeUpdate();
        }
        int full = rows.size() / ROWS_PER_STATEMENT * ROWS_PER_STATEMENT;
        for (int start = 0; start < full; start += ROWS_PER_STATEMENT) {
            for (int i = 0; i < ROWS_PER_STATEMENT; i++) {
                columns.bind(upsert, rows.get(start + i), 0, i * columns.size() + 1);
            }
            upsert.executeUpdate();
        }
        if (full < rows.size()) {
            try (PreparedStatement rest = connection.prepareStatement(upsertSql(table, columns, rows.size() - full))) {
                for (int i = 0; full + i < rows.size(); i++) {
                    columns.bind(rest, rows.get(full + i), 0, i * columns.size() + 1);
                }
                rest.executeUpdate();
            }
        }
    }

    private static String upsertSql(String table, Columns columns, int rows)
    {
        String values = "(" + "?, ".repeat(columns.size() - 1) + "?)";
        StringBuilder sql = new StringBuilder("INSERT INTO ").append(table).append(" (").append(columns.nameList())
                .append(") VALUES ");
        for (int i = 0; i < rows; i++) {
            sql.append(i == 0 ? "" : ", ").append(values);
        }
        sql.append(" ON CONFLICT (id) DO UPDATE SET ");
        for (String name : columns.names.subList(1, columns.size())) {
            sql.append(name.equals(columns.names.get(1)) ? "" : ", ").append(name).append(" = EXCLUDED.").append(name);
        }
        return sql.toString();
    }
}
