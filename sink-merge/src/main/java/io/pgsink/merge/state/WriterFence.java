package io.pgsink.merge.state;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.config.SinkConfig;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * Writer fencing: a generation per sink and fence, kept in the offsets table as a row of its own
 * ({@code sink_name} is the sink's name followed by {@value #SINK_SUFFIX}, {@code source_partition}
 * the fence, {@code source_offset} the generation), so that of two writers
 * with the same {@code sink.name} only the one that claimed last commits. A writer
 * {@linkplain #claim claims} a fence when it starts (the standalone service: the whole sink, fence
 * {@code ""}; a Kafka Connect task: each topic partition it is given, on {@code open}), which
 * raises the generation by one; every flush transaction then checks, by compare-and-set on that
 * row, that the generation is still its own ({@link #check}). The check's {@code UPDATE} locks
 * the row until the flush commits, so a claim waits for a flush in progress, and no flush of the
 * older writer commits after the claim did.
 *
 * <p>Stateless apart from its configuration; every method works on the connection it is given.
 */
public final class WriterFence
{
    /** Ends the {@code sink_name} of a generation row, which keeps it apart from the sink's positions. */
    static final String SINK_SUFFIX = " (writer generation)";

    private final String sinkName;
    private final String generationSinkName;
    private final String qualifiedTable;

    public WriterFence(SinkConfig config)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.generationSinkName = sinkName + SINK_SUFFIX;
        this.qualifiedTable = quote(config.offsetsSchema()) + "." + quote(config.offsetsTable());
    }

    /**
     * Raises the generation of {@code fence} by one in the connection's transaction, which the
     * caller commits, and returns it. Waits for a flush of another writer in progress (its check
     * holds the row's lock). A concurrent first claim of the same fence fails on the key: the
     * caller claims again.
     */
    public long claim(Connection connection, String fence)
            throws SQLException
    {
        try (PreparedStatement update = connection.prepareStatement("UPDATE " + qualifiedTable
                + " SET source_offset = (source_offset::bigint + 1)::text, updated_at = now() WHERE sink_name = ? AND "
                + "source_partition = ?")) {
            update.setString(1, generationSinkName);
            update.setString(2, fence);
            if (update.executeUpdate() == 0) {
                try (PreparedStatement insert = connection.prepareStatement("INSERT INTO " + qualifiedTable
                        + " (source_offset, sink_name, source_partition, updated_at) VALUES ('1', ?, ?, now())")) {
                    insert.setString(1, generationSinkName);
                    insert.setString(2, fence);
                    insert.executeUpdate();
                }
                return 1;
            }
        }
        try (PreparedStatement select = connection.prepareStatement("SELECT source_offset FROM " + qualifiedTable
                + " WHERE sink_name = ? AND source_partition = ?")) {
            select.setString(1, generationSinkName);
            select.setString(2, fence);
            try (ResultSet rows = select.executeQuery()) {
                rows.next();
                return Long.parseLong(rows.getString(1));
            }
        }
    }

    /**
     * Checks, in the flush's transaction, that every fence in {@code claims} still has the
     * generation claimed, and locks their rows until the transaction ends.
     *
     * @throws WriterFencedException naming the first fence another writer claimed since
     */
    public void check(Connection connection, Map<String, Long> claims)
            throws SQLException
    {
        if (claims.isEmpty()) {
            return;
        }
        try (PreparedStatement statement = connection.prepareStatement(checkStatement())) {
            for (Map.Entry<String, Long> claim : new TreeMap<>(claims).entrySet()) {
                bindCheck(statement, 1, claim.getKey(), claim.getValue());
                checked(claim.getKey(), claim.getValue(), statement.executeUpdate());
            }
        }
    }

    /** The compare-and-set of one fence's generation ({@link #check}): three parameters, see {@link #bindCheck}. */
    String checkStatement()
    {
        return "UPDATE " + qualifiedTable + " SET updated_at = now() WHERE sink_name = ? AND source_partition = ? AND "
                + "source_offset = ?";
    }

    /**
     * Binds a check of {@code fence} at {@code generation} to the parameters of {@link #checkStatement} from
     * {@code first} on.
     */
    void bindCheck(PreparedStatement statement, int first, String fence, long generation)
            throws SQLException
    {
        statement.setString(first, generationSinkName);
        statement.setString(first + 1, fence);
        statement.setString(first + 2, Long.toString(generation));
    }

    /**
     * Judges a check of {@code fence} by the rows its {@code UPDATE} changed.
     *
     * @throws WriterFencedException when none: another writer claimed the fence since
     */
    void checked(String fence, long generation, int updatedRows)
    {
        if (updatedRows == 0) {
            throw new WriterFencedException(sinkName, fence, generation, qualifiedTable);
        }
    }

    /** Whether {@code e} is a concurrent first claim's key violation, worth claiming again. */
    public static boolean isRace(SQLException e)
    {
        return SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState());
    }
}
