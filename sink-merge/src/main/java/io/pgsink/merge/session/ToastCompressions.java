package io.pgsink.merge.session;

import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.ToastCompression;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Sets how the server compresses the values target connections TOAST ({@code target.toast.compression}).
 * lz4 compresses several times faster than pglz, and the S2W benchmark (rows of three 0.2 to 3 kB
 * values) spends most of its server time compressing; readers see the same values whichever
 * method wrote them.
 */
public final class ToastCompressions
{
    /**
     * One round trip, no error where the server lacks the setting (before PostgreSQL 14, Greenplum 7) or lz4 (built
     * without it): then no row.
     */
    @Language("SQL")
    private static final String SET_LZ4 = "SELECT pg_catalog.set_config('default_toast_compression', 'lz4', false) "
            + "FROM pg_catalog.pg_settings"
            + " WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)";

    private ToastCompressions() {}

    /**
     * Applies {@code compression} to a new connection.
     *
     * @return whether the connection now compresses with lz4
     */
    public static boolean apply(Connection connection, ToastCompression compression)
            throws SQLException
    {
        return switch (compression) {
            case SERVER_DEFAULT -> false;
            case LZ4 -> {
                try (Statement statement = connection.createStatement();
                        ResultSet rows = statement.executeQuery(SET_LZ4)) {
                    yield rows.next();
                }
            }
        };
    }

    /** Whether the connection compresses with lz4 (false where the server has no such setting). */
    public static boolean lz4(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT current_setting('default_toast_compression', "
                        + "true) = 'lz4'")) {
            return rows.next() && rows.getBoolean(1);
        }
    }

    /**
     * What {@code pgsink check} says about {@code compression}, given whether the sink's connections compress with lz4.
     */
    public static String describe(ToastCompression compression, boolean lz4)
    {
        return switch (compression) {
            case SERVER_DEFAULT -> "large values the sink writes are compressed as the server's "
                    + "default_toast_compression says (" + SinkConfig.TARGET_TOAST_COMPRESSION + "=server-default)";
            case LZ4 -> lz4
                    ? "large values the sink writes are compressed with lz4 (" + SinkConfig.TARGET_TOAST_COMPRESSION
                    + "=lz4; columns with a COMPRESSION of their own keep it)"
                    : "the server offers no lz4 TOAST compression (PostgreSQL before 14, built without lz4, or "
                    + "Greenplum): large values the sink writes are compressed as its default says";
        };
    }
}
