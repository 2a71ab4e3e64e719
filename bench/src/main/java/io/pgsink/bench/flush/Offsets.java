package io.pgsink.bench.flush;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;

/** The baselines store their position per transaction too, as pgsink does, so that all do the same work. */
final class Offsets
        implements AutoCloseable
{
    private final PreparedStatement store;

    Offsets(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS baseline_offsets (name text PRIMARY KEY, position bigint)");
        }
        store = connection.prepareStatement("INSERT INTO baseline_offsets VALUES ('bench', ?) ON CONFLICT (name) DO "
                + "UPDATE SET position = EXCLUDED.position");
    }

    void store(long position)
            throws SQLException
    {
        store.setLong(1, position);
        store.executeUpdate();
    }

    @Override
    public void close()
            throws SQLException
    {
        store.close();
    }
}
