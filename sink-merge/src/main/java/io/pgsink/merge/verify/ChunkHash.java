package io.pgsink.merge.verify;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * How a server hashes a key range's rows into one value: the sum of a 64-bit hash of each row's
 * text. A sum does not depend on the order the server reads rows in, so a range is read in any
 * order (no {@code ORDER BY}, no sort) and no row leaves the server. Both sides of a comparison use
 * the same function ({@link #common}): a chunk whose sums differ is then read key by key with
 * {@link ComparedSide#chunkRows} (md5 per row), so a weaker chunk hash can only cost a re-read, and
 * a collision (two different ranges with the same count and sum: about 2<sup>-64</sup> per
 * differing range) is the only way a difference goes unseen.
 */
public enum ChunkHash
{
    /**
     * {@code hashtextextended(text, 0)}: PostgreSQL 11 and later, Greenplum 7. About as costly as
     * printing the row, about half of md5's cost (bench/results/verify-*.md).
     */
    HASH_TEXT_EXTENDED("hashtextextended(%s COLLATE \"C\", 0)"),
    /** The first 64 bits of md5, on every server, including Greenplum 6 (PostgreSQL 9.4 based). */
    MD5("('x' || substr(md5(%s), 1, 16))::bit(64)::bigint");

    private final String rowHash;

    ChunkHash(String rowHash)
    {
        this.rowHash = rowHash;
    }

    /** The bigint hash of a text expression, for a {@code sum}. */
    String rowHash(String text)
    {
        return rowHash.formatted(text);
    }

    /** The cheapest hash both servers have. */
    public static ChunkHash common(Connection source, Connection target)
            throws SQLException
    {
        return hasHashTextExtended(source) && hasHashTextExtended(target) ? HASH_TEXT_EXTENDED : MD5;
    }

    private static boolean hasHashTextExtended(Connection connection)
            throws SQLException
    {
        // by name, not by version: Greenplum reports its own versions
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery(
                        "SELECT to_regprocedure('pg_catalog.hashtextextended(text, bigint)') IS NOT NULL")) {
            result.next();
            return result.getBoolean(1);
        }
    }
}
