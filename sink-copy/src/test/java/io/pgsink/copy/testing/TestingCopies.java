package io.pgsink.copy.testing;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/** What a test asks about the COPY commands of a session. */
public final class TestingCopies
{
    private TestingCopies() {}

    /** The COPY commands the connection's backend is running; a test asserts none is left. */
    public static int activeCopies(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery(
                        "SELECT count(*) FROM pg_stat_progress_copy WHERE pid = pg_backend_pid()")) {
            result.next();
            return result.getInt(1);
        }
    }
}
