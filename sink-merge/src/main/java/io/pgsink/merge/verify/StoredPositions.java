package io.pgsink.merge.verify;

import io.pgsink.core.config.SinkConfig;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Reads the source positions a sink stored in the target's offsets table ({@code offsets.schema}.
 * {@code offsets.table}) with the data they belong to: what a verification waits for, to know that
 * the target holds every source transaction up to a point. Reads only.
 */
public final class StoredPositions
{
    private StoredPositions() {}

    /**
     * The stored offsets (JSON text) of sink {@code sink.name}, one per source partition; empty
     * before its first flush or when the table is missing.
     */
    public static List<String> read(Connection connection, SinkConfig config)
            throws SQLException
    {
        return read(connection, config, false);
    }

    /**
     * {@link #read}, locking the sink's rows ({@code FOR UPDATE}) for the connection's transaction
     * when {@code lock}: every flush of the sink updates them in its own transaction, so holding
     * them keeps flushes out until the transaction ends, and a flush in progress is waited for.
     */
    public static List<String> read(Connection connection, SinkConfig config, boolean lock)
            throws SQLException
    {
        List<String> offsets = new ArrayList<>();
        String table = quote(config.offsetsSchema()) + "." + quote(config.offsetsTable());
        try (PreparedStatement exists = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            exists.setString(1, table);
            try (ResultSet rows = exists.executeQuery()) {
                if (!rows.next() || !rows.getBoolean(1)) {
                    return offsets;
                }
            }
        }
        String query = "SELECT source_offset FROM " + table + " WHERE sink_name = ? ORDER BY source_partition"
                + (lock ? " FOR UPDATE" : "");
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            statement.setString(1, config.sinkName());
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    offsets.add(rows.getString(1));
                }
            }
        }
        return offsets;
    }
}
