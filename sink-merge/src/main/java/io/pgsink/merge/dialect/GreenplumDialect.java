package io.pgsink.merge.dialect;

import io.pgsink.merge.table.StagingColumns;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.List;
import java.util.Optional;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Greenplum 6 and 7, and Apache Cloudberry.
 *
 * <p>The staging table is distributed by the target's distribution key, so the {@code DELETE ...
 * USING} join finds every key on the segment that holds it, without moving rows; a randomly
 * distributed or replicated target gets a randomly distributed staging table (the join then moves
 * rows). No {@code ON CONFLICT}: the offsets row is updated and inserted only when no row was
 * updated. The same statements serve Greenplum 6 (PostgreSQL 9.4 syntax: no {@code ON CONFLICT},
 * no {@code ADD COLUMN IF NOT EXISTS}), Greenplum 7 and Apache Cloudberry; in
 * {@code CREATE TABLE} the {@code ON COMMIT} clause comes before {@code DISTRIBUTED BY} on all
 * three.
 */
final class GreenplumDialect
        implements StagingSql, DeleteSql, OffsetSql, DistributionSql, ServerFeatures
{
    /** The first key of {@link #flushLock}'s advisory locks: "pgsk", apart from other applications' locks. */
    private static final int FLUSH_LOCK_CLASS = 0x7067736b;

    @Override
    public String createStagingTable(String stagingName, List<TargetColumn> columns, TargetTable target)
    {
        return PostgreSqlDialect.createTemporaryTable(stagingName, columns, target) + " ON COMMIT DELETE ROWS"
                + distributedBy(target.distributionKey());
    }

    /** Tables with a key are hash-distributed by it; tables without one round-robin. */
    @Override
    public String distributedBy(List<String> columns)
    {
        if (columns.isEmpty()) {
            return " DISTRIBUTED RANDOMLY";
        }
        StringJoiner list = new StringJoiner(", ", " DISTRIBUTED BY (", ")");
        for (String column : columns) {
            list.add(quote(column));
        }
        return list.toString();
    }

    @Override
    public boolean distributes()
    {
        return true;
    }

    /**
     * Without direct dispatch: a lookup by key otherwise goes to the one segment that owns the key,
     * and misses a copy of it written straight into another segment (in utility mode, or left by
     * a failed expansion), which a scan of a key range, dispatched to every segment, does see.
     */
    @Override
    public List<String> everySegmentSession()
    {
        return List.of("SET gp_enable_direct_dispatch = off");
    }

    @Override
    public boolean supportsMerge(int serverMajorVersion)
    {
        return false;
    }

    /**
     * Greenplum 7 and Cloudberry (PostgreSQL 12 and 14 based) have {@code INSERT ... ON CONFLICT};
     * Greenplum 6 (9.4 based) does not. See {@code TableWriter.ApplyMethod#UPSERT} for what the
     * measurement on a Greenplum 7 cluster found.
     */
    @Override
    public boolean prefersUpsert(int serverMajorVersion)
    {
        return serverMajorVersion >= 12;
    }

    /** Not read: only {@code MERGE}, which Greenplum lacks, needs them. */
    @Override
    public boolean readsBinaryCopy(int serverMajorVersion)
    {
        return serverMajorVersion >= 12;
    }

    @Override
    public boolean bindsSmallBatches()
    {
        return false;
    }

    @Override
    public boolean readsGeneratedColumns(int serverMajorVersion)
    {
        return false;
    }

    @Override
    public String deleteTouchedKeys(TargetTable target, String stagingName)
    {
        return deleteJoined(target, stagingName, "");
    }

    @Override
    public String deleteStagedDeletes(TargetTable target, String stagingName)
    {
        return deleteJoined(target, stagingName, " AND NOT s." + quote(StagingColumns.INSERT));
    }

    @Override
    public String deleteStagedRows(TargetTable target, String stagingName)
    {
        return deleteJoined(target, stagingName, " AND s." + quote(StagingColumns.INSERT));
    }

    /**
     * A join of the staging table with the target on the key. The staging table is distributed
     * like the target, so each segment joins its own rows without moving any. Greenplum's planner
     * has no statistics for the fresh staging table and picks a hash join that reads the whole
     * target on every segment (measured on Greenplum 7 with 2 segments: 410 ms to delete the keys
     * of 5,000 staged rows from a 500,000-row table); with hash and merge joins off for the
     * transaction, it probes the primary-key index once per staged key (23 to 45 ms), for single
     * and composite keys alike. ({@code k = ANY(ARRAY(SELECT ...))}, PostgreSQL's way, gathers the
     * keys on the coordinator and takes 31 ms for a single key, but turns into a full scan for a
     * composite one: 179 ms.)
     */
    private static String deleteJoined(TargetTable target, String stagingName, String filter)
    {
        StringJoiner conditions = new StringJoiner(" AND ");
        for (String column : target.primaryKey()) {
            conditions.add("t." + quote(column) + " = s." + quote(column));
        }
        return "SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; "
                + "DELETE FROM " + Statements.qualified(target.id()) + " AS t USING " + quote(stagingName)
                + " AS s WHERE " + conditions + filter;
    }

    @Override
    public boolean storesPositionsLast()
    {
        return true;
    }

    /** An advisory lock of the sink's name until the transaction ends: the coordinator's own, in no table. */
    @Override
    public Optional<String> flushLock(boolean exclusive)
    {
        return Optional.of("SELECT pg_advisory_xact_lock" + (exclusive ? "" : "_shared") + "("
                + FLUSH_LOCK_CLASS + ", hashtext(?))");
    }

    @Override
    public List<String> storeOffset(String qualifiedOffsetsTable)
    {
        return List.of(
                "UPDATE " + qualifiedOffsetsTable + " SET source_offset = ?, updated_at = now() WHERE sink_name = ? "
                + "AND source_partition = ?",
                "INSERT INTO " + qualifiedOffsetsTable + " (source_offset, sink_name, source_partition, updated_at) "
                + "VALUES (?, ?, ?, now())");
    }
}
