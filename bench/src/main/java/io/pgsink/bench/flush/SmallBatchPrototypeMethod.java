package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A prototype of a small-batch path for pgsink, to measure whether one would win: pgsink's own
 * merge buffer, then each batch applied without staging or COPY, in three round trips:
 * {@code DELETE ... WHERE id = ANY(?)} of the touched keys that are not fresh; one statement that
 * stores the position (in a data-modifying CTE, which touches another table, so its order does not
 * matter) and inserts every final row from {@code unnest} of one array per column; {@code COMMIT}.
 * pgsink's COPY path needs five for such a batch on PostgreSQL 15 (the position, which carries the
 * transaction's BEGIN; COPY into staging, two; the MERGE; COMMIT).
 *
 * <p>Not part of pgsink: no TOAST filling, no fallback when a fresh key exists, one table, the
 * narrow columns only. Used by the small-flush suite alone.
 */
final class SmallBatchPrototypeMethod
        implements Method
{
    @Override
    public String name()
    {
        return "prototype: pgsink merge + DELETE ANY/INSERT UNNEST";
    }

    @Override
    public void apply(BenchmarkDatabase database, String table, Workload workload, int batchSize)
            throws SQLException
    {
        SinkConfig config = PgsinkMethod.config(database, table, batchSize);
        try (Applier applier = new Applier(database, table, workload.columns);
                BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), applier)) {
            PgsinkMethod.replay(table, workload, sink);
        }
    }

    private static final class Applier
            implements BatchApplier
    {
        private final Connection connection;
        private final Columns columns;
        private final PreparedStatement delete;
        private final PreparedStatement insert;

        Applier(BenchmarkDatabase database, String table, Columns columns)
                throws SQLException
        {
            this.columns = columns;
            this.connection = database.connect(false);
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE IF NOT EXISTS baseline_offsets (name text PRIMARY KEY, position "
                        + "bigint)");
            }
            connection.commit();
            StringBuilder unnest = new StringBuilder();
            for (Columns.Column column : columns.columns) {
                unnest.append(unnest.length() == 0 ? "" : ", ").append("?::").append(column.kind().typeName)
                        .append("[]");
            }
            delete = connection.prepareStatement("DELETE FROM " + table + " WHERE id = ANY(?)");
            insert = connection.prepareStatement("WITH position AS (INSERT INTO baseline_offsets VALUES ('bench', ?) "
                    + "ON CONFLICT (name) DO UPDATE SET position = EXCLUDED.position)"
                    + " INSERT INTO " + table + " (" + columns.nameList() + ") SELECT * FROM unnest(" + unnest + ")");
        }

        @Override
        public void apply(Batch batch)
        {
            try {
                for (TableBatch table : batch.tables()) {
                    List<Object> deleted = new ArrayList<>();
                    List<Object[]> rows = new ArrayList<>();
                    for (RowChange change : table.changes()) {
                        if (!change.isFresh()) {
                            deleted.add(change.key().value(0));
                        }
                        if (!change.isDelete()) {
                            rows.add(change.row());
                        }
                    }
                    if (!deleted.isEmpty()) {
                        delete.setArray(1, connection.createArrayOf("int8", deleted.toArray()));
                        delete.executeUpdate();
                    }
                    insert.setLong(1, Long.parseLong(batch.positions().get("bench").offset()));
                    for (Columns.Column column : columns.columns) {
                        Object[] values = new Object[rows.size()];
                        for (int row = 0; row < values.length; row++) {
                            values[row] = rows.get(row)[column.index()];
                        }
                        Array array = connection.createArrayOf(column.kind().typeName, values);
                        insert.setArray(column.index() + 2, array);
                    }
                    insert.executeUpdate();
                }
                connection.commit();
            }
            catch (SQLException e) {
                throw new IllegalStateException("The prototype could not apply a batch: " + e.getMessage(), e);
            }
        }

        @Override
        public Map<String, SourcePosition> committedPositions()
        {
            return Map.of();
        }

        @Override
        public void close()
        {
            try {
                connection.close();
            }
            catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
