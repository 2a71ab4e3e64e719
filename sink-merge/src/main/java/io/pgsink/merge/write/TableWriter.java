package io.pgsink.merge.write;

import io.pgsink.copy.load.CopyListener;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.buffer.ValueSizes;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.CopyDataFormat;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.plan.SoftDeletes;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.session.ClosingStatement;
import io.pgsink.merge.table.Statements;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;


/**
 * Writes one table's changes of a flush, in the flush's transaction. Rows of fresh keys (see
 * {@link RowChange#isFresh()}) with every value known are COPYed straight into the target, which
 * is as fast as loading gets. Every other change goes through the staging table:
 * <ul>
 * <li>with {@link ApplyMethod#MERGE}, when the user may update the table, its rows are narrow
 *     (see {@link #MERGE_MAX_ROW_BYTES}) and it has no unique index beyond its key
 *     ({@link TablePlan#mergeable}), with its whole row, applied by one {@code MERGE}
 *     (delete, update in place, or insert); an update in place costs about two thirds of a delete
 *     and an insert, and mostly finds room on the row's own page, so neither the index nor the
 *     table grows;</li>
 * <li>otherwise only its key, deleted from the target, after which the final rows are COPYed
 *     into the target.</li>
 * </ul>
 * Rows whose unchanged TOAST values must be filled from the target are staged whole either way
 * and filled before the delete.
 *
 * <p>A batch of at most {@code flush.small.batch.max.events} changes takes neither COPY nor the
 * staging table where {@link SmallBatchWriter} can apply it: the same statements, over its changes
 * bound as arrays.
 *
 * <p>A row the target or the encoder refuses is named by a {@link RowRejectedException}; a key
 * taken for fresh that exists after all, by a {@link FreshKeyConflict}.
 *
 * <p>Not thread-safe: owned by the sink's thread (its {@link TableCopy} reuses a buffer).
 */
public final class TableWriter
{
    /**
     * Rows wider than this (as the buffer counts their bytes, sampled over the first
     * {@value #ROW_WIDTH_SAMPLE} rows that are merged) are deleted and inserted rather than merged:
     * merging writes each row twice, into the staging table and then into the target, which costs
     * more than the delete it saves once rows are TOASTed (PostgreSQL TOASTs rows beyond about
     * 2 kB). Measured with the benchmark's S2 (rows of ~60 bytes: merge faster) and S2W (~5 kB:
     * merge 16 to 45% slower).
     */
    public static final long MERGE_MAX_ROW_BYTES = 2048;
    private static final int ROW_WIDTH_SAMPLE = 64;
    /**
     * Merging, a table batch of at most this many changes stages its fresh rows too, rather than
     * COPYing them straight into the target: the MERGE inserts them for the price of an index probe
     * each (a few microseconds), which saves the second COPY's two round trips (its statement, then
     * its data; a round trip is a fraction of a millisecond on a local network, more across one).
     * The benchmark's 100-event flushes take 5 round trips instead of 7; on loopback, where a round
     * trip costs little, their time did not change beyond the noise of the machine.
     */
    static final int SMALL_BATCH_CHANGES = 256;
    /**
     * What staging a fresh row costs the server beyond COPYing it straight into the target: written
     * to the staging table, read back, probed and inserted by the MERGE, one row at a time where
     * COPY inserts in bulk. Merging, a batch stages its fresh rows too when they cost less than the
     * two round trips of the second COPY ({@link #roundTrip}), as they do across a network: at a
     * 5 ms round trip up to 2,500 of them, on loopback (0.05 ms) about what
     * {@link #SMALL_BATCH_CHANGES} stages anyway. An estimate for narrow rows: 5,000 fresh rows
     * took the server about 5 times longer MERGEd from staging than COPYed (psql on PostgreSQL 15,
     * 100,000-row table, measured under load, scaled to an idle machine).
     */
    static final long STAGED_FRESH_ROW_NANOS = 4_000;

    /**
     * Whether the keys the buffer took for new ({@link RowChange#isFresh()}) are trusted to be absent from the target.
     */
    public enum FreshKeys
    {
        /**
         * Their rows are COPYed into the target without deleting the key first; a unique violation
         * there means the source replayed events applied before ({@link FreshKeyConflict}).
         */
        TRUSTED,
        /** Every touched key is deleted first. */
        DISTRUSTED,
    }

    /** How staged changes to existing keys are applied. */
    public enum ApplyMethod
    {
        /**
         * One {@code MERGE}, for the tables whose rows it pays for (PostgreSQL 15+, when {@code target.update.mode}
         * allows it).
         */
        MERGE,
        /**
         * Where there is no {@code MERGE} but {@code INSERT ... ON CONFLICT} (Greenplum 7, Apache
         * Cloudberry): staged rows are upserted, and only deleted keys deleted, by two statements
         * sent together; for the tables {@code MERGE} would take, and neither append-optimized
         * (which {@code ON CONFLICT} refuses) nor distributed by a column the update would set.
         */
        UPSERT,
        /** Delete every touched key, then insert the final rows. */
        DELETE_INSERT,
    }

    private final TableCopy copy;
    /**
     * {@code delete.mode=soft}: deleted keys keep their rows, so every change is staged with its whole row (see
     * {@link SoftDeletes}).
     */
    private final boolean softDeletes;
    private final SmallBatchWriter small;
    /** The target's round trip as estimated from the flushes so far ({@link #roundTrip}); 0 until measured. */
    private long roundTripNanos;

    /**
     * @param config {@code copy.format}: with {@link CopyDataFormat#BINARY}, each COPY is binary
     *        where {@code serverReadsBinary} says the server reads pgsink's binary rows and
     *        {@link TableCopy} finds every value fit for it, else CSV in {@code copy.*};
     *        {@code flush.small.batch.max.events}: batches up to that size are applied without COPY
     *        ({@link SmallBatchWriter}) where {@code serverBindsSmallBatches} says so; {@code delete.mode}
     */
    public TableWriter(SinkConfig config, BooleanSupplier serverReadsBinary, BooleanSupplier serverBindsSmallBatches,
            CopyListener copyListener, MetadataValues metadata)
    {
        this.copy = new TableCopy(config.copyFormat(), config.copyDataFormat(), serverReadsBinary, copyListener,
                metadata);
        this.softDeletes = config.changeMetadata().softDeletes();
        this.small = new SmallBatchWriter(config.smallBatchMaxEvents(), config.copyFormat().nulHandling(),
                serverBindsSmallBatches, metadata, softDeletes, copyListener);
    }

    /**
     * Tells the time a statement took that cost the flush one round trip and hardly any work on the server. The
     * estimate follows a shorter time at once and a longer one by an eighth per flush, so that slow answers of a
     * busy server (which would make staging look cheap while the server is the bottleneck) hardly count.
     */
    public void roundTrip(long nanos)
    {
        this.roundTripNanos = roundTripNanos == 0 || nanos < roundTripNanos ? nanos
                : roundTripNanos + (nanos - roundTripNanos) / 8;
    }

    public void truncate(Connection connection, TableId target)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(Statements.truncate(target));
        }
    }

    /**
     * Whether {@link #write} may COPY some of the batch's changes into the plan's staging table:
     * false when every change is a row of a trusted fresh key, which goes straight into the target
     * (an insert-only stream), so that no staging table is created for it (on Greenplum a
     * {@code CREATE TEMPORARY TABLE} takes 100 to 350 ms).
     */
    public static boolean stages(TablePlan plan, TableBatch batch, FreshKeys freshKeys)
    {
        if (plan.appendOnly || plan.history) {
            return false;
        }
        if (freshKeys == FreshKeys.DISTRUSTED || batch.changes().size() <= SMALL_BATCH_CHANGES) {
            return true;
        }
        for (RowChange change : batch.changes()) {
            if (RowFilter.STAGED_TRUSTING_FRESH_KEYS.test(change)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Writes the batch's changes (not its truncate, see {@link #truncate}) to the plan's target table.
     *
     * @param closing whether nothing but {@code COMMIT} follows in the flush's transaction: the statement that applies
     *        the changes (bound, or staged), when it would be the last one, is then left to the caller, to send with
     *        the {@code COMMIT} in one round trip ({@link ClosingStatement}); a merging batch COPYs its fresh rows into
     *        the target before it stages the rest, so that its {@code MERGE} is that last statement
     * @return the statement left to send with the {@code COMMIT}, or empty when every statement ran
     */
    public Optional<ClosingStatement> write(Connection connection, TablePlan plan, TableBatch batch,
            FreshKeys freshKeys, ApplyMethod method, boolean closing, FlushPhases phases)
            throws SQLException
    {
        long start = System.nanoTime();
        if (plan.appendOnly || plan.history) {
            // a history row per change (deletes included), or a table without a key: straight into the target
            copy.write(connection, plan, batch, CopyRows.Layout.TARGET_ROWS,
                    plan.history ? RowFilter.STAGED : RowFilter.DIRECT, FreshKeys.DISTRUSTED);
            phases.add(FlushPhases.Phase.COPY_TARGET, start);
            return Optional.empty();
        }
        // merge: stage whole rows and apply them with one statement (MERGE, or the upsert)
        boolean merge = switch (method) {
            case MERGE -> plan.mergeable && plan.target.updatable() && narrowRows(batch);
            case UPSERT -> plan.upsertable() && narrowRows(batch);
            case DELETE_INSERT -> false;
        };
        if (!(merge && method == ApplyMethod.UPSERT) && small.takes(plan, batch, freshKeys, merge)) {
            if (closing) {
                return Optional.of((closingConnection, commit) -> small.write(closingConnection, plan, batch, merge,
                        commit));
            }
            small.write(connection, plan, batch, merge, "");
            phases.add(FlushPhases.Phase.APPLY, start);
            return Optional.empty();
        }
        String apply = !merge ? plan.delete : method == ApplyMethod.MERGE ? plan.merge : plan.upsert;
        // soft deletes tell a staged delete from a staged row by the insert flag, so rows are staged whole, as for
        // merging
        boolean wholeRows = merge || softDeletes;
        boolean stageAll = switch (freshKeys) {
            case TRUSTED -> wholeRows
                    && (batch.changes().size() <= SMALL_BATCH_CHANGES || stagingFreshRowsPays(batch.changes()));
            case DISTRUSTED -> true;
        };
        RowFilter staged = stageAll ? RowFilter.STAGED : RowFilter.STAGED_TRUSTING_FRESH_KEYS;
        // merging, only fresh keys skip the staging table, and only in larger batches while they are trusted
        RowFilter direct = !wholeRows ? RowFilter.DIRECT : stageAll ? RowFilter.NONE : RowFilter.DIRECT_FRESH;
        boolean anyStaged = false;
        boolean anyDirect = false;
        for (RowChange change : batch.changes()) {
            anyStaged |= staged.test(change);
            anyDirect |= direct.test(change);
        }
        // merging, the fresh rows are new keys the MERGE does not touch, and the table has no other unique index
        // (TablePlan#mergeable): they may go first, which leaves the MERGE last, to travel with the COMMIT
        boolean directFirst = merge && anyStaged;
        if (anyDirect && directFirst) {
            copy.write(connection, plan, batch, CopyRows.Layout.TARGET_ROWS, direct, freshKeys);
            start = phases.add(FlushPhases.Phase.COPY_TARGET, start);
        }
        if (anyStaged) {
            copy.write(connection, plan, batch, wholeRows ? CopyRows.Layout.STAGED_ROWS : CopyRows.Layout.STAGED_KEYS,
                    staged, FreshKeys.DISTRUSTED);
            start = phases.add(FlushPhases.Phase.COPY_STAGING, start);
            if (batch.rowsWithUnavailableValues() > 0) {
                try (Statement statement = connection.createStatement()) {
                    statement.executeUpdate(plan.fill);
                    checkFilled(statement, plan);
                }
                start = phases.add(FlushPhases.Phase.FILL, start);
            }
            boolean last = !(anyDirect && !directFirst) && (wholeRows || batch.rowsWithUnavailableValues() == 0);
            if (closing && last) {
                return Optional.of((closingConnection, commit) ->
                        execute(closingConnection, apply + commit));
            }
            execute(connection, apply);
            start = phases.add(FlushPhases.Phase.APPLY, start);
        }
        if (anyDirect && !directFirst) {
            copy.write(connection, plan, batch, CopyRows.Layout.TARGET_ROWS, direct, freshKeys);
            start = phases.add(FlushPhases.Phase.COPY_TARGET, start);
        }
        if (!wholeRows && batch.rowsWithUnavailableValues() > 0) {
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate(plan.insertFromStaging);
            }
            phases.add(FlushPhases.Phase.INSERT, start);
        }
        return Optional.empty();
    }

    /**
     * Executes a statement prepared, so that after a few flushes pgjdbc keeps it prepared on the server, which then
     * plans it once per connection rather than at every flush.
     */
    private static void execute(Connection connection, String sql)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.execute();
        }
    }

    /**
     * Whether staging the fresh rows with the rest costs less than the round trips of COPYing them apart
     * ({@link #STAGED_FRESH_ROW_NANOS}); never when only fresh rows would be staged.
     */
    private boolean stagingFreshRowsPays(List<RowChange> changes)
    {
        long affordable = 2 * roundTripNanos / STAGED_FRESH_ROW_NANOS;
        long fresh = 0;
        for (RowChange change : changes) {
            if (RowFilter.DIRECT_FRESH.test(change) && ++fresh > affordable) {
                return false;
            }
        }
        // the other changes are staged anyway: without them the fresh rows' COPY would be the only one
        return fresh < changes.size();
    }

    /** Whether the rows that would be merged are narrow enough for merging to pay ({@link #MERGE_MAX_ROW_BYTES}). */
    private static boolean narrowRows(TableBatch batch)
    {
        long bytes = 0;
        int rows = 0;
        for (RowChange change : batch.changes()) {
            if (!change.isDelete() && !change.isFresh()) {
                bytes += ValueSizes.row(change.row());
                if (++rows == ROW_WIDTH_SAMPLE) {
                    break;
                }
            }
        }
        return rows == 0 || bytes / rows <= MERGE_MAX_ROW_BYTES;
    }

    /** Fails, naming keys and columns, when staged rows found no target row to take their unavailable values from. */
    private static void checkFilled(Statement statement, TablePlan plan)
            throws SQLException
    {
        List<String> missing = new ArrayList<>();
        List<String> moved = new ArrayList<>();
        int keyColumns = plan.target.primaryKey().size();
        try (ResultSet rows = statement.executeQuery(plan.unfilled)) {
            while (rows.next()) {
                String unavailable = rows.getString(1);
                List<String> key = new ArrayList<>();
                List<String> oldKey = new ArrayList<>();
                for (int i = 0; i < keyColumns; i++) {
                    key.add(rows.getString(i + 2));
                    String old = rows.getString(keyColumns + i + 2);
                    if (old != null) {
                        oldKey.add(old);
                    }
                }
                List<String> columns = new ArrayList<>();
                for (int i = 0; i < unavailable.length() && i < plan.columns.size(); i++) {
                    if (unavailable.charAt(i) == '1') {
                        columns.add(plan.columns.get(i).name());
                    }
                }
                if (oldKey.isEmpty()) {
                    missing.add("key (" + String.join(", ", key) + ") column(s) " + columns);
                }
                else {
                    moved.add("key (" + String.join(", ", key) + ") column(s) " + columns + " moved from key ("
                            + String.join(", ", oldKey) + ")");
                }
            }
        }
        if (missing.isEmpty() && moved.isEmpty()) {
            return;
        }
        StringBuilder message = new StringBuilder("Cannot apply changes to " + plan.target.id()
                + ": the source did not send unchanged TOAST values");
        if (!moved.isEmpty()) {
            message.append(" of the new rows of primary-key changes, and the target no longer has the old rows to "
                    + "take them from: ").append(String.join("; ", moved))
                    .append(". The delete of each key change was applied before its create, in an earlier flush"
                            + " (Kafka Connect: the old row was not saved in pgsink_moved_rows within "
                            + "key.change.wait.ms,"
                            + " or was cleaned up before the create came; see the WARN that named the create),"
                            + " or the target never had the old row.");
        }
        if (!missing.isEmpty()) {
            message.append(moved.isEmpty() ? " and" : " For other rows,")
                    .append(" the target has no row to take them from: ").append(String.join("; ", missing))
                    .append(". The target is missing rows the source has (was it loaded with a snapshot?).");
        }
        message.append(" Set REPLICA IDENTITY FULL on the source table to always get full rows.");
        throw new SinkException(ErrorCode.DATA, message.toString());
    }

    /**
     * A key the batch took for new exists in the target; the batch is applied again with {@link FreshKeys#DISTRUSTED}.
     */
    public static final class FreshKeyConflict
            extends RuntimeException
    {
        private final TableId table;
        private final String key;

        FreshKeyConflict(TableId table, @Nullable RowKey key)
        {
            super("key " + key + " of " + table + " exists already", null, false, false);
            this.table = table;
            this.key = key == null ? "(not named by the server)" : key.toString();
        }

        public TableId table()
        {
            return table;
        }

        public String key()
        {
            return key;
        }
    }
}
