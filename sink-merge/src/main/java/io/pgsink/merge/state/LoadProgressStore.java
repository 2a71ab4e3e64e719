package io.pgsink.merge.state;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.dialect.Dialect;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * The initial load's progress table in the target ({@code offsets.schema}.{@code pgsink_initial_load},
 * DDL in {@link SinkTables}). A chunk's row is written in the transaction that copies the chunk's
 * rows, so the table says exactly which chunks the target holds, and at which source snapshot
 * (the exported snapshot and the replication slot's consistent point) they were read.
 *
 * <p>Stateless apart from its configuration; every method works on the connection it is given and
 * leaves committing to the caller unless it says otherwise.
 */
public final class LoadProgressStore
{
    public static final String TABLE = "pgsink_initial_load";
    static final int STARTED = -1;
    static final int COMPLETE = -2;
    private static final String LOAD_SCHEMA = "";
    private static final String LOAD_TABLE = "";

    private final String sinkName;
    private final String qualifiedTable;

    public LoadProgressStore(SinkConfig config)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.qualifiedTable = quote(config.offsetsSchema()) + "." + quote(TABLE);
    }

    /** The table, quoted, for messages. */
    public String qualifiedTable()
    {
        return qualifiedTable;
    }

    /** Creates the table unless it exists, and commits. */
    public void createTable(Connection connection, Dialect dialect)
            throws SQLException
    {
        SinkTables.create(connection, SinkTables.initialLoadTable(qualifiedTable, dialect));
    }

    /** What the table holds for this sink. */
    public LoadProgress read(Connection connection)
            throws SQLException
    {
        Optional<String> startLsn = Optional.empty();
        boolean complete = false;
        Map<TableId, LoadProgress.TableProgress> tables = new HashMap<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT source_schema, source_table, chunk, "
                + "chunks, rows_loaded, bytes_loaded, load_lsn, load_snapshot FROM "
                + qualifiedTable + " WHERE sink_name = ? ORDER BY source_schema, source_table, chunk")) {
            statement.setString(1, sinkName);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    int chunk = rows.getInt(3);
                    if (chunk == STARTED) {
                        startLsn = Optional.of(rows.getString(7));
                        continue;
                    }
                    if (chunk == COMPLETE) {
                        complete = true;
                        continue;
                    }
                    TableId table = TableId.of(rows.getString(1), rows.getString(2));
                    LoadProgress.TableProgress previous = tables.get(table);
                    TreeSet<Integer> chunks = previous == null ? new TreeSet<>()
                            : new TreeSet<>(previous.loadedChunks());
                    chunks.add(chunk);
                    long loadedRows = rows.getLong(5) + (previous == null ? 0 : previous.rows());
                    long loadedBytes = rows.getLong(6) + (previous == null ? 0 : previous.bytes());
                    tables.put(table,
                            new LoadProgress.TableProgress(rows.getInt(4), chunks, loadedRows, loadedBytes,
                                    rows.getString(7), rows.getString(8)));
                }
            }
        }
        return new LoadProgress(startLsn, complete, tables);
    }

    /** Forgets every row of this sink: a load starts from scratch. */
    public void clear(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("DELETE FROM " + qualifiedTable
                + " WHERE sink_name = ?")) {
            statement.setString(1, sinkName);
            statement.executeUpdate();
        }
    }

    /** Forgets the chunks of {@code tables}: they are loaded again. */
    public void forget(Connection connection, Collection<TableId> tables)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("DELETE FROM " + qualifiedTable
                + " WHERE sink_name = ? AND source_schema = ? AND source_table = ?")) {
            for (TableId table : tables) {
                statement.setString(1, sinkName);
                statement.setString(2, table.schema());
                statement.setString(3, table.table());
                statement.executeUpdate();
            }
        }
    }

    /** Marks the load started at the replication slot's consistent point {@code slotLsn}. */
    public void started(Connection connection, String slotLsn, String snapshot)
            throws SQLException
    {
        insert(connection, TableId.of("-", "-"), STARTED, 0, 0, 0, slotLsn, snapshot, true);
    }

    /** Marks the load complete: from now on the sink streams. */
    public void completed(Connection connection)
            throws SQLException
    {
        insert(connection, TableId.of("-", "-"), COMPLETE, 0, 0, 0, "", "", true);
    }

    /** Records one chunk of {@code table}, in the transaction that copied its rows. */
    public void chunkLoaded(Connection connection, TableId table, int chunk, int chunks, long rows, long bytes,
            String loadLsn, String snapshot)
            throws SQLException
    {
        insert(connection, table, chunk, chunks, rows, bytes, loadLsn, snapshot, false);
    }

    private void insert(Connection connection, TableId table, int chunk, int chunks, long rows, long bytes, String lsn,
            String snapshot, boolean loadRow)
            throws SQLException
    {
        @Language("SQL")
        String sql = "INSERT INTO " + qualifiedTable
                + " (sink_name, source_schema, source_table, chunk, chunks, rows_loaded, bytes_loaded, load_lsn, "
                + "load_snapshot, loaded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now())";
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, sinkName);
            statement.setString(2, loadRow ? LOAD_SCHEMA : table.schema());
            statement.setString(3, loadRow ? LOAD_TABLE : table.table());
            statement.setInt(4, chunk);
            statement.setInt(5, chunks);
            statement.setLong(6, rows);
            statement.setLong(7, bytes);
            statement.setString(8, lsn);
            statement.setString(9, snapshot);
            statement.executeUpdate();
        }
    }
}
