package io.pgsink.merge.state;

import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.dialect.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * The offsets table ({@code offsets.schema}.{@code offsets.table}, DDL in {@link SinkTables}): the
 * source position of the last change applied, one row per sink and source partition, written in
 * the transaction that applies the changes. Reading it tells a restarted sink where to resume.
 *
 * <p>Stateless apart from its configuration; every method works on the connection it is given.
 */
public final class PositionStore
{
    private final String sinkName;
    private final String qualifiedTable;

    public PositionStore(SinkConfig config)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.qualifiedTable = quote(config.offsetsSchema()) + "." + quote(config.offsetsTable());
    }

    /** The table, quoted, for messages. */
    public String qualifiedTable()
    {
        return qualifiedTable;
    }

    /**
     * Creates the table unless it exists, in a transaction of its own. Several sinks or tasks may
     * start at once: {@code CREATE TABLE IF NOT EXISTS} is not atomic, and the loser fails on the
     * catalog's unique index, or finds the row type taken; the table exists then.
     */
    public void createTable(Connection connection, Dialect dialect)
            throws SQLException
    {
        SinkTables.create(connection, SinkTables.offsetsTable(qualifiedTable, dialect));
    }

    /** The positions the sink stored, by source partition. */
    public Map<String, SourcePosition> read(Connection connection)
            throws SQLException
    {
        Map<String, SourcePosition> positions = new TreeMap<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT source_partition, source_offset FROM "
                + qualifiedTable + " WHERE sink_name = ?")) {
            statement.setString(1, sinkName);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    positions.put(rows.getString(1), new SourcePosition(rows.getString(1), rows.getString(2)));
                }
            }
        }
        return positions;
    }

    /**
     * Deletes the positions of the sink in the connection's transaction (not its writer generations); returns how many
     * there were.
     */
    public int delete(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("DELETE FROM " + qualifiedTable
                + " WHERE sink_name = ?")) {
            statement.setString(1, sinkName);
            return statement.executeUpdate();
        }
    }

    /**
     * Holds off the sink's flushes that store positions until the connection's transaction ends
     * ({@code exclusive}), or waits for whoever holds them off (shared, a flush's first statement),
     * where the dialect needs it ({@link io.pgsink.merge.dialect.OffsetSql#flushLock}).
     */
    public void lockFlushes(Connection connection, Dialect dialect, boolean exclusive)
            throws SQLException
    {
        Optional<String> lock = dialect.offsets().flushLock(exclusive);
        if (lock.isEmpty()) {
            return;
        }
        try (PreparedStatement statement = connection.prepareStatement(lock.get())) {
            statement.setString(1, sinkName);
            statement.executeQuery().close();
        }
    }

    /**
     * Stores the positions in the connection's transaction, in partition order.
     *
     * @return the transaction's id where the dialect's statement returns it (PostgreSQL), to find
     *         out whether the transaction committed when the connection is lost during
     *         {@code COMMIT}; 0 when unknown (Greenplum, or no position to store)
     */
    public long store(Connection connection, Dialect dialect, Map<String, SourcePosition> positions)
            throws SQLException
    {
        long transactionId = 0;
        if (positions.isEmpty()) {
            return transactionId;
        }
        List<String> statements = dialect.offsets().storeOffset(qualifiedTable);
        for (SourcePosition position : new TreeMap<>(positions).values()) {
            for (String sql : statements) {
                try (PreparedStatement statement = connection.prepareStatement(sql)) {
                    bind(statement, 1, position);
                    boolean stored;
                    if (statement.execute()) {
                        try (ResultSet rows = statement.getResultSet()) {
                            stored = rows.next();
                            if (stored) {
                                transactionId = rows.getLong(1);
                            }
                        }
                    }
                    else {
                        stored = statement.getUpdateCount() > 0;
                    }
                    if (stored) {
                        break;
                    }
                }
            }
        }
        return transactionId;
    }

    /**
     * The one statement that stores a position where the dialect has one (PostgreSQL's upsert,
     * which returns the transaction's id); empty where a position takes a second statement when the
     * first wrote nothing (Greenplum), so that it cannot be sent with others ({@link FlushHead}).
     */
    Optional<String> singleStatement(Dialect dialect)
    {
        List<String> statements = dialect.offsets().storeOffset(qualifiedTable);
        return statements.size() == 1 ? Optional.of(statements.get(0)) : Optional.empty();
    }

    /** Binds {@code position} to the three parameters of a storing statement from {@code first} on. */
    void bind(PreparedStatement statement, int first, SourcePosition position)
            throws SQLException
    {
        statement.setString(first, position.offset());
        statement.setString(first + 1, sinkName);
        statement.setString(first + 2, position.partition());
    }
}
