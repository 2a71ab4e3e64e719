package io.pgsink.connector.standalone.verify;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.verify.StoredPositions;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.OptionalLong;

/**
 * How far the sink has applied the source's WAL: the {@code lsn} of the offsets it stored in the
 * target's offsets table (Debezium's offset JSON: the LSN of the last change applied, or of the
 * last transaction's end), and whether a service streams at all (its replication slot is in use).
 * A stored LSN at or past a source LSN {@code L} means that every source transaction that committed
 * before {@code L} is applied: Debezium streams transactions in commit order, and a change's LSN
 * lies before its transaction's commit.
 */
final class SinkProgress
{
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SinkProgress() {}

    /** The highest {@code lsn} of the sink's stored positions, or empty when none is stored. */
    static OptionalLong storedLsn(Connection target, SinkConfig config)
            throws SQLException
    {
        OptionalLong highest = OptionalLong.empty();
        for (String offset : StoredPositions.read(target, config)) {
            try {
                JsonNode lsn = MAPPER.readTree(offset).get("lsn");
                boolean higher = lsn != null && lsn.canConvertToLong()
                        && (highest.isEmpty() || lsn.asLong() > highest.getAsLong());
                if (higher) {
                    highest = OptionalLong.of(lsn.asLong());
                }
            }
            catch (JsonProcessingException e) {
                // not Debezium PostgreSQL's offset: no LSN to wait for
            }
        }
        return highest;
    }

    /** The source's WAL insert position: at or past the commit of every transaction the connection's snapshot sees. */
    static long currentLsn(Connection source)
            throws SQLException
    {
        try (PreparedStatement statement = source.prepareStatement("SELECT "
                + "pg_catalog.pg_current_wal_insert_lsn()::text");
                ResultSet rows = statement.executeQuery()) {
            rows.next();
            return parse(rows.getString(1));
        }
    }

    /** Whether replication slot {@code slot} is in use, by a running service. */
    static boolean streaming(Connection source, String slot)
            throws SQLException
    {
        String query = "SELECT active FROM pg_catalog.pg_replication_slots WHERE slot_name = ?";
        try (PreparedStatement statement = source.prepareStatement(query)) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getBoolean(1);
            }
        }
    }

    /**
     * How far the service has received the source's WAL, as its replication connection last
     * reported it ({@code pg_stat_replication.write_lsn}, which pgjdbc moves on every message and
     * keepalive); empty when no service streams from slot {@code slot}.
     */
    static OptionalLong receivedLsn(Connection source, String slot)
            throws SQLException
    {
        try (PreparedStatement statement = source.prepareStatement("SELECT r.write_lsn::text FROM "
                + "pg_catalog.pg_replication_slots s"
                + " JOIN pg_catalog.pg_stat_replication r ON r.pid = s.active_pid WHERE s.slot_name = ?")) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() && rows.getString(1) != null
                        ? OptionalLong.of(parse(rows.getString(1)))
                        : OptionalLong.empty();
            }
        }
    }

    /** {@code 0/16B3748} as a number. */
    static long parse(String lsn)
    {
        int slash = lsn.indexOf('/');
        return (Long.parseLong(lsn.substring(0, slash), 16) << 32) | Long.parseLong(lsn.substring(slash + 1), 16);
    }

    /** A number as PostgreSQL prints an LSN. */
    static String text(long lsn)
    {
        return Long.toHexString(lsn >>> 32).toUpperCase(Locale.ROOT) + "/"
                + Long.toHexString(lsn & 0xFFFF_FFFFL).toUpperCase(Locale.ROOT);
    }
}
