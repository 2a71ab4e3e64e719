package io.pgsink.connector.standalone.verify;

import io.pgsink.merge.verify.ChunkHash;
import io.pgsink.merge.verify.ComparedSide;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import static java.util.Objects.requireNonNull;

/**
 * Compares key ranges of a table on a source and a target connection of its own: both servers
 * count and hash the range ({@link ComparedSide#chunkSummary}); only a range whose counts or hashes
 * differ has its keys and row hashes read from both sides and diffed, and a range that holds more
 * than twice the chunk size on either side (a target with many extra rows) is first split at that
 * side's keys, so that no more than about a chunk of keys is ever held.
 *
 * <p>Not thread-safe: one worker thread owns it and its connections; it lends the target connection
 * to its target thread for each range's summary, and waits for it.
 */
final class ChunkComparer
{
    /** The row hash of a key a side holds more than once (an md5 is 32 hex digits). */
    static final String DUPLICATE = "more than one row";

    private final Connection source;
    private final Connection target;
    private final long chunkRows;
    private final ChunkHash hash;

    private final ExecutorService targetThread;

    /**
     * @param targetThread the thread that uses the target connection while the caller's thread uses
     *         the source connection, so that both servers hash a range at the same time
     */
    ChunkComparer(Connection source, Connection target, long chunkRows, ChunkHash hash, ExecutorService targetThread)
    {
        this.source = requireNonNull(source, "source is null");
        this.target = requireNonNull(target, "target is null");
        this.chunkRows = chunkRows;
        this.hash = requireNonNull(hash, "hash is null");
        this.targetThread = requireNonNull(targetThread, "targetThread is null");
    }

    void compare(KeyRange range, TableResult result)
            throws SQLException, InterruptedException
    {
        TablePair table = range.table();
        Future<Summary> targetRead = targetThread.submit(() -> summary(target, table.target(), range, hash));
        Summary sourceSummary;
        try {
            sourceSummary = summary(source, table.source(), range, hash);
        }
        catch (SQLException | RuntimeException e) {
            // the target's statement ends before the caller may close its connection
            try {
                targetRead.get();
            }
            catch (ExecutionException other) {
                e.addSuppressed(other.getCause());
            }
            throw e;
        }
        Summary targetSummary = awaited(targetRead);
        if (sourceSummary.equals(targetSummary)) {
            result.chunk(sourceSummary.rows(), targetSummary.rows(), List.of());
            return;
        }
        boolean sourceLarger = sourceSummary.rows() >= targetSummary.rows();
        if (Math.max(sourceSummary.rows(), targetSummary.rows()) > 2 * chunkRows) {
            List<KeyRange> parts = sourceLarger
                    ? split(source, table.source(), range) : split(target, table.target(), range);
            for (KeyRange part : parts) {
                compare(part, result);
            }
            return;
        }
        Map<List<String>, String> sourceRows = rows(source, table.source(), range);
        Map<List<String>, String> targetRows = rows(target, table.target(), range);
        List<Difference> differences = new ArrayList<>();
        sourceRows.forEach((key, hash) -> Difference.of(hash, targetRows.get(key))
                .ifPresent(kind -> differences.add(new Difference(kind, key))));
        targetRows.forEach((key, hash) -> {
            if (!sourceRows.containsKey(key)) {
                differences.add(new Difference(Difference.Kind.EXTRA, key));
            }
        });
        // counted by the servers: a key held twice is two rows
        result.chunk(sourceSummary.rows(), targetSummary.rows(), differences);
    }

    private static Summary awaited(Future<Summary> read)
            throws SQLException, InterruptedException
    {
        try {
            return read.get();
        }
        catch (ExecutionException e) {
            if (e.getCause() instanceof SQLException sql) {
                throw sql;
            }
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** {@code range} cut into ranges of {@code chunkRows} of {@code side}'s keys. */
    private List<KeyRange> split(Connection connection, ComparedSide side, KeyRange range)
            throws SQLException
    {
        List<KeyRange> parts = new ArrayList<>();
        Optional<List<String>> lower = range.lower();
        while (true) {
            Optional<List<String>> boundary = nextBoundary(connection, side, lower, range.upper(), chunkRows - 1);
            if (boundary.isEmpty()) {
                parts.add(new KeyRange(range.table(), lower, range.upper()));
                return parts;
            }
            parts.add(new KeyRange(range.table(), lower, boundary));
            lower = boundary;
        }
    }

    /**
     * The key {@code offset} rows after {@code lower} (and up to {@code upper}), or empty when there are
     * fewer rows.
     */
    static Optional<List<String>> nextBoundary(Connection connection, ComparedSide side, Optional<List<String>> lower,
            Optional<List<String>> upper, long offset)
            throws SQLException
    {
        String query = side.nextBoundary(lower.isPresent(), upper.isPresent());
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            int index = bind(statement, 1, lower);
            index = bind(statement, index, upper);
            statement.setLong(index, offset);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? Optional.of(key(rows, side.keyColumns().size())) : Optional.empty();
            }
        }
    }

    private static Summary summary(Connection connection, ComparedSide side, KeyRange range, ChunkHash hash)
            throws SQLException
    {
        String query = side.chunkSummary(range.lower().isPresent(), range.upper().isPresent(), hash);
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            bind(statement, bind(statement, 1, range.lower()), range.upper());
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return new Summary(rows.getLong(1), rows.getString(2));
            }
        }
    }

    private static Map<List<String>, String> rows(Connection connection, ComparedSide side, KeyRange range)
            throws SQLException
    {
        Map<List<String>, String> hashes = new LinkedHashMap<>();
        String query = side.chunkRows(range.lower().isPresent(), range.upper().isPresent());
        try (PreparedStatement statement = connection.prepareStatement(query)) {
            bind(statement, bind(statement, 1, range.lower()), range.upper());
            try (ResultSet rows = statement.executeQuery()) {
                int keyColumns = side.keyColumns().size();
                while (rows.next()) {
                    put(hashes, key(rows, keyColumns), rows.getString(keyColumns + 1));
                }
            }
        }
        return hashes;
    }

    /** The rows of {@code keys} on {@code side}: row hash by key, keys without a (visible) row absent. */
    static Map<List<String>, String> rowsByKey(Connection connection, ComparedSide side, List<List<String>> keys)
            throws SQLException
    {
        Map<List<String>, String> hashes = new HashMap<>();
        if (keys.isEmpty()) {
            return hashes;
        }
        try (PreparedStatement statement = connection.prepareStatement(side.rowsByKey(keys.size()))) {
            int index = 1;
            for (List<String> key : keys) {
                index = bind(statement, index, Optional.of(key));
            }
            try (ResultSet rows = statement.executeQuery()) {
                int keyColumns = side.keyColumns().size();
                while (rows.next()) {
                    put(hashes, key(rows, keyColumns), rows.getString(keyColumns + 1));
                }
            }
        }
        return hashes;
    }

    /**
     * Puts a row's hash by its key; a key read twice gets {@link #DUPLICATE}, which no source row
     * hash equals: a target without a unique key, or a Greenplum row on a segment that does not own
     * its key (each segment's unique index sees its own rows only), holds a key more than once.
     */
    private static void put(Map<List<String>, String> hashes, List<String> key, String hash)
    {
        if (hashes.putIfAbsent(key, hash) != null) {
            hashes.put(key, DUPLICATE);
        }
    }

    private static int bind(PreparedStatement statement, int first, Optional<List<String>> key)
            throws SQLException
    {
        int index = first;
        if (key.isPresent()) {
            for (String value : key.get()) {
                statement.setString(index++, value);
            }
        }
        return index;
    }

    private static List<String> key(ResultSet rows, int columns)
            throws SQLException
    {
        return ComparedSide.key(rows, columns);
    }

    /** A range's row count and hash on one side. */
    private record Summary(long rows, @Nullable String hash) {}
}
