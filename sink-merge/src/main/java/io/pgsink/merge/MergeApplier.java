package io.pgsink.merge;

import io.pgsink.copy.CopyLoader;
import io.pgsink.copy.CopyRejectedException;
import io.pgsink.copy.CsvWriter;
import io.pgsink.copy.SqlIdentifiers;
import io.pgsink.copy.ValueEncodingException;
import io.pgsink.core.Batch;
import io.pgsink.core.BatchApplier;
import io.pgsink.core.CopyFormat;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.RowChange;
import io.pgsink.core.RowKey;
import io.pgsink.core.RejectedRow;
import io.pgsink.core.RejectedRowHandler;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import io.pgsink.core.SourcePosition;
import io.pgsink.core.TableBatch;
import io.pgsink.core.TableId;
import io.pgsink.core.TableNameFormat;
import io.pgsink.core.TableSchema;
import io.pgsink.core.TargetDialect;
import io.pgsink.core.UnavailableValue;
import io.pgsink.core.ValueSizes;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/**
 * Applies merged batches to a PostgreSQL or Greenplum target, one transaction per batch:
 * <ol>
 * <li>per table, in table order: {@code TRUNCATE} when the batch truncates it; {@code COPY} the
 *     merged rows (final rows and deleted keys) into the table's staging table; fill unchanged
 *     TOAST values from the current target rows; delete every touched key; insert every final row;</li>
 * <li>store the batch's source positions in the offsets table;</li>
 * <li>commit.</li>
 * </ol>
 * A crash at any point leaves either the whole batch with its positions or none of it. Replaying a
 * batch gives the same state, since it deletes every key it writes.
 *
 * <p>Staging tables are temporary, {@code ON COMMIT DELETE ROWS}, created once per connection and
 * table version in a transaction of their own, and reused by every flush. When the connection is
 * lost, the next batch opens a new one and creates them again.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class MergeApplier
        implements BatchApplier
{
    private static final Logger log = LoggerFactory.getLogger(MergeApplier.class);
    private static final String STAGING_PREFIX = "pgsink_stage_";
    /**
     * Rows wider than this (as the buffer counts their bytes, sampled over the first
     * {@value #ROW_WIDTH_SAMPLE} rows that are merged) are deleted and inserted rather than merged:
     * merging writes each row twice, into the staging table and then into the target, which costs
     * more than the delete it saves once rows are TOASTed (PostgreSQL TOASTs rows beyond about
     * 2 kB). Measured with the benchmark's S2 (rows of ~60 bytes: merge faster) and S2W (~5 kB:
     * merge 16 to 45% slower).
     */
    static final long MERGE_MAX_ROW_BYTES = 2048;
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

    private final String sinkName;
    private final TargetConnector connector;
    private final TargetDialect dialectSetting;
    private final CopyFormat format;
    private final TableNameFormat routing;
    private final boolean appendOnlyWithoutKey;
    private final boolean evolveSchema;
    /** Whether DDL ran in the current transaction, which must then commit before the data transaction. */
    private boolean ddlExecuted;
    private final String offsetsTable;
    private final boolean tolerateRejectedRows;
    @Nullable
    private final RejectedRowHandler rejectedRowHandler;
    private final DeadLetterTable deadLetters;
    /** The source table whose apply failed last, for isolating the row at fault. */
    @Nullable
    private TableId failedTable;

    @Nullable
    private Connection connection;
    private Dialect dialect = Dialect.POSTGRESQL;
    /** Whether {@code target.update.mode} allows {@code MERGE}. */
    private final boolean mergeAllowed;
    /** The id of the open transaction, as the positions' statement returned it; 0 when unknown. */
    private long transactionId;
    /** Whether the target runs PostgreSQL 15+, which has {@code MERGE}, and the configuration allows it. */
    private boolean mergeSupported;
    private final Map<TableId, TargetTable> targets = new HashMap<>();
    private final Map<TableId, TablePlan> plans = new HashMap<>();
    /** Staging tables that exist on the current connection, by target table. */
    private final Map<TableId, TablePlan> staged = new HashMap<>();
    private int stagingSequence;
    private final StringBuilder mask = new StringBuilder();

    public MergeApplier(SinkConfig config, TargetConnector connector)
    {
        this(config, connector, null);
    }

    /**
     * @param rejectedRowHandler under {@code errors.tolerance=all}, receives the rows skipped in a
     *         batch (before it commits); when null they go to the dead-letter table
     *         ({@code errors.deadletter.table}) in the same transaction
     */
    public MergeApplier(SinkConfig config, TargetConnector connector, @Nullable RejectedRowHandler rejectedRowHandler)
    {
        requireNonNull(config, "config is null");
        this.tolerateRejectedRows = config.toleratesRejectedRows();
        this.rejectedRowHandler = rejectedRowHandler;
        this.deadLetters = new DeadLetterTable(config.sinkName(), SqlIdentifiers.quote(config.offsetsSchema()) + "." + SqlIdentifiers.quote(config.deadLetterTable()));
        this.sinkName = config.sinkName();
        this.connector = requireNonNull(connector, "connector is null");
        this.dialectSetting = config.targetDialect();
        this.format = config.copyFormat();
        this.routing = config.tableNameFormat();
        this.appendOnlyWithoutKey = config.appendOnlyWithoutKey();
        this.evolveSchema = config.evolvesSchema();
        this.mergeAllowed = config.mergesUpdates();
        this.offsetsTable = SqlIdentifiers.quote(config.offsetsSchema()) + "." + SqlIdentifiers.quote(config.offsetsTable());
    }

    public MergeApplier(SinkConfig config)
    {
        this(config, TargetConnector.fromConfig(config));
    }

    /** The dialect detected on the current (or last) connection. */
    public Dialect dialect()
    {
        return dialect;
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        try {
            Connection connection = connection();
            Map<String, SourcePosition> positions = new TreeMap<>();
            try (PreparedStatement statement = connection.prepareStatement("SELECT source_partition, source_offset FROM " + offsetsTable + " WHERE sink_name = ?")) {
                statement.setString(1, sinkName);
                try (ResultSet rows = statement.executeQuery()) {
                    while (rows.next()) {
                        positions.put(rows.getString(1), new SourcePosition(rows.getString(1), rows.getString(2)));
                    }
                }
            }
            connection.commit();
            return positions;
        }
        catch (SQLException e) {
            throw failed(e, "Cannot read stored positions of sink '" + sinkName + "' from " + offsetsTable);
        }
    }

    /**
     * Applies the batch. Under {@code errors.tolerance=all}, a row the target refuses is taken out
     * of the batch (found by the failure's COPY row, or by bisecting the failing table's changes
     * in transactions that are rolled back) and the batch applied again without it; the skipped
     * rows go to the dead-letter destination in the transaction that applies the rest.
     */
    @Override
    public void apply(Batch batch)
    {
        long start = System.nanoTime();
        List<RejectedRow> rejected = new ArrayList<>();
        for (RejectedRow row : batch.rejected()) {
            rejected.add(new RejectedRow(row.table(), route(row.table()), row.schema(), row.change(), row.column(), row.reason()));
        }
        int changes = 0;
        for (TableBatch table : batch.tables()) {
            changes += table.changes().size();
        }
        int maxRejected = Math.max(100, changes / 10);
        Batch current = batch;
        while (true) {
            try {
                applyRecovering(current, rejected);
                break;
            }
            catch (RowRejectedException e) {
                if (!tolerateRejectedRows) {
                    throw e;
                }
                rejected.add(new RejectedRow(e.sourceTable(), e.targetTable(), schemaOf(current, e.sourceTable()), e.change(), e.column(), e.reason()));
                current = without(current, e.sourceTable(), e.change());
            }
            catch (SinkException e) {
                TableId table = failedTable;
                if (!tolerateRejectedRows || e.errorCode() != ErrorCode.DATA || table == null) {
                    throw e;
                }
                RowChange bad = isolate(current, table);
                rejected.add(new RejectedRow(table, route(table), schemaOf(current, table), bad, java.util.Optional.empty(), SqlErrors.describe(e.getCause() instanceof SQLException sql ? sql : new SQLException(e.getMessage()))));
                current = without(current, table, bad);
            }
            if (rejected.size() > maxRejected) {
                throw new SinkException(ErrorCode.DATA, "Gave up applying a batch of " + batch.events() + " events after the target refused " + rejected.size()
                        + " rows of it: the failure does not seem to be caused by single rows. First refused: " + rejected.get(0).describe());
            }
        }
        for (RejectedRow row : rejected) {
            log.warn("{} - skipped a row the target refused (errors.tolerance=all): {}", sinkName, row.describe());
        }
        if (log.isDebugEnabled()) {
            log.debug("{} - applied {} events to {} tables in {} ms", sinkName, batch.events(), batch.tables().size(), (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** Applies the batch, falling back to deleting every key when a fresh key existed. */
    private void applyRecovering(Batch batch, List<RejectedRow> rejected)
    {
        try {
            attemptKeepingStaging(batch, true, rejected);
        }
        catch (FreshKeyConflict conflict) {
            // keys the buffer took for new were in the target already: the source replayed events
            // that were applied before. Apply the batch again, deleting every touched key first.
            log.info("{} - {} already holds key {} that the batch inserts (replayed events); applying the batch again with every key deleted first",
                    sinkName, conflict.table, conflict.key);
            attemptKeepingStaging(batch, false, rejected);
        }
    }

    /**
     * Finds a change of {@code table} the target refuses: the shortest failing prefix of its
     * changes ends with one. Each probe applies the tables the failed attempt applied (those
     * before {@code table}, which passed) and a prefix of {@code table}'s changes, and rolls back;
     * the tables after it are left out, since a refused row of theirs would fail every probe.
     */
    private RowChange isolate(Batch batch, TableId table)
    {
        TableBatch tableBatch = tableOf(batch, table);
        List<TableBatch> reached = new ArrayList<>();
        for (TableBatch each : batch.tables()) {
            reached.add(each);
            if (each.table().equals(table)) {
                break;
            }
        }
        Batch probed = new Batch(reached, batch.positions(), batch.events());
        List<RowChange> changes = tableBatch.changes();
        int passing = 0;
        int failing = changes.size();
        while (failing - passing > 1) {
            int middle = (passing + failing) >>> 1;
            if (fails(probed.withTable(tableBatch.withChanges(changes.subList(0, middle))))) {
                failing = middle;
            }
            else {
                passing = middle;
            }
        }
        return changes.get(failing - 1);
    }

    private boolean fails(Batch batch)
    {
        try {
            attempt(batch, false, List.of(), false);
            return false;
        }
        catch (SinkException e) {
            if (e.isTransient()) {
                throw e;
            }
            return true;
        }
    }

    private static TableBatch tableOf(Batch batch, TableId table)
    {
        for (TableBatch each : batch.tables()) {
            if (each.table().equals(table)) {
                return each;
            }
        }
        throw new IllegalStateException("No changes of " + table + " in the batch");
    }

    private static io.pgsink.core.TableSchema schemaOf(Batch batch, TableId table)
    {
        return tableOf(batch, table).schema().orElseThrow();
    }

    private static Batch without(Batch batch, TableId table, RowChange change)
    {
        TableBatch tableBatch = tableOf(batch, table);
        List<RowChange> kept = new ArrayList<>(tableBatch.changes().size());
        for (RowChange each : tableBatch.changes()) {
            if (each != change) {
                kept.add(each);
            }
        }
        return batch.withTable(tableBatch.withChanges(kept));
    }

    /**
     * Applies the batch; when the session lost its staging tables (Greenplum drops temporary
     * tables when it resets the segments' gang; {@code DISCARD TEMP} does it on PostgreSQL), they
     * are created again and the batch applied once more.
     */
    private void attemptKeepingStaging(Batch batch, boolean trustFreshKeys, List<RejectedRow> rejected)
    {
        try {
            attempt(batch, trustFreshKeys, rejected, true);
        }
        catch (StagingLost lost) {
            log.info("{} - the session lost its staging tables ({}); creating them again", sinkName, lost.getMessage());
            staged.clear();
            attempt(batch, trustFreshKeys, rejected, true);
        }
    }

    /**
     * One transaction: every table, the positions, the rejected rows; then commit, or roll back
     * when {@code commit} is false (a probe while isolating a refused row).
     */
    private void attempt(Batch batch, boolean trustFreshKeys, List<RejectedRow> rejected, boolean commit)
    {
        TableBatch current = null;
        failedTable = null;
        try {
            Connection connection = connection();
            prepare(connection, batch);
            // first, so that the transaction's BEGIN travels with it: before a COPY, pgjdbc sends
            // BEGIN on its own and waits for the answer, a round trip of its own
            storePositions(connection, batch.positions());
            for (TableBatch table : batch.tables()) {
                current = table;
                failedTable = table.table();
                applyTable(connection, table, trustFreshKeys);
            }
            current = null;
            failedTable = null;
            if (!rejected.isEmpty()) {
                if (rejectedRowHandler != null) {
                    rejectedRowHandler.rejected(rejected);
                }
                else {
                    deadLetters.write(connection, dialect, rejected);
                }
            }
            if (commit) {
                commit(connection, batch);
            }
            else {
                connection.rollback();
            }
        }
        catch (SQLException e) {
            if (SqlErrors.UNDEFINED_TABLE.equals(e.getSQLState()) && e.getMessage() != null && e.getMessage().contains(STAGING_PREFIX)) {
                rollback(e);
                throw new StagingLost(e);
            }
            throw failed(e, current == null ? "Cannot apply batch of " + batch.events() + " events" : "Cannot apply changes to " + route(current.table()) + " (from " + current.table() + ")");
        }
        catch (RuntimeException e) {
            rollback(e);
            throw e;
        }
    }

    /** Reads target tables and creates staging tables that are missing, committed before the data transaction starts. */
    private void prepare(Connection connection, Batch batch)
            throws SQLException
    {
        ddlExecuted = false;
        boolean created = false;
        for (TableBatch table : batch.tables()) {
            if (table.schema().isEmpty() || table.changes().isEmpty()) {
                continue;
            }
            TablePlan plan = plan(connection, table.schema().get());
            if (!plan.appendOnly && staged.get(plan.target.id()) != plan) {
                TablePlan previous = staged.remove(plan.target.id());
                try (Statement statement = connection.createStatement()) {
                    if (previous != null) {
                        statement.execute("DROP TABLE IF EXISTS " + SqlIdentifiers.quote(previous.stagingName));
                    }
                    statement.execute(plan.createStaging);
                }
                created = true;
                staged.put(plan.target.id(), plan);
            }
        }
        if (created || ddlExecuted) {
            connection.commit();
        }
    }

    private TablePlan plan(Connection connection, TableSchema schema)
            throws SQLException
    {
        TablePlan previous = plans.get(schema.table());
        if (previous != null && (previous.source == schema || previous.source.equals(schema))) {
            return previous;
        }
        TableId targetId = route(schema.table());
        TargetTable target = targets.get(targetId);
        if (target == null || previous != null) {
            // a new source schema version: the target may have changed too
            target = readTarget(connection, targetId, schema);
        }
        if (previous != null) {
            SchemaEvolution.checkTypeChanges(previous.source, schema, target);
        }
        if (evolveSchema) {
            List<String> additions = SchemaEvolution.addColumns(schema, target);
            if (!additions.isEmpty()) {
                executeDdl(connection, additions);
                log.info("{} - added column(s) to {} for the new schema of {}", sinkName, targetId, schema.table());
                target = readTarget(connection, targetId, schema);
            }
        }
        TablePlan plan = TablePlan.create(schema, target, dialect, format, appendOnlyWithoutKey, stagingName(targetId));
        plans.put(schema.table(), plan);
        return plan;
    }

    private TargetTable readTarget(Connection connection, TableId targetId, TableSchema schema)
            throws SQLException
    {
        java.util.Optional<TargetTable> found = TargetCatalog.read(connection, targetId, dialect.isGreenplum());
        if (found.isEmpty() && evolveSchema) {
            executeDdl(connection, SchemaEvolution.createTable(targetId, schema, dialect, TargetCatalog.schemaExists(connection, targetId.schema())));
            log.info("{} - created target table {} for {}", sinkName, targetId, schema.table());
            found = TargetCatalog.read(connection, targetId, dialect.isGreenplum());
        }
        TargetTable target = found.orElseThrow(() -> new SinkException(ErrorCode.SCHEMA_MISMATCH, "Target table " + targetId + " does not exist (or the target user cannot see it)."
                + " Create it with the columns and primary key of " + schema.table() + ", or set schema.evolution=add-columns to have pgsink create it."));
        targets.put(targetId, target);
        return target;
    }

    private void executeDdl(Connection connection, List<String> statements)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
        ddlExecuted = true;
    }

    private String stagingName(TableId target)
    {
        StringBuilder name = new StringBuilder(STAGING_PREFIX).append(++stagingSequence).append('_');
        String table = target.table().toLowerCase(Locale.ROOT);
        for (int i = 0; i < table.length() && name.length() < 60; i++) {
            char c = table.charAt(i);
            if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') {
                name.append(c);
            }
        }
        return name.toString();
    }

    private TableId route(TableId source)
    {
        return routing.targetOf(source);
    }

    /**
     * Applies one table's changes. Rows of fresh keys (see {@link RowChange#isFresh()}) with every
     * value known are COPYed straight into the target, which is as fast as loading gets. Every
     * other change goes through the staging table:
     * <ul>
     * <li>on PostgreSQL 15+, when the user may update the table and its rows are narrow (see
     *     {@link #MERGE_MAX_ROW_BYTES}), with its whole row, applied by one {@code MERGE} (delete,
     *     update in place, or insert); an update in place costs about two thirds of a delete and
     *     an insert, and mostly finds room on the row's own page, so neither the index nor the
     *     table grows;</li>
     * <li>elsewhere only its key, deleted from the target, after which the final rows are COPYed
     *     into the target.</li>
     * </ul>
     * Rows whose unchanged TOAST values must be filled from the target are staged whole either way
     * and filled before the delete.
     */
    private void applyTable(Connection connection, TableBatch batch, boolean trustFreshKeys)
            throws SQLException
    {
        TableId targetId = route(batch.table());
        if (batch.truncate()) {
            try (Statement statement = connection.createStatement()) {
                statement.execute(Statements.truncate(targetId));
            }
        }
        if (batch.changes().isEmpty()) {
            return;
        }
        TablePlan plan = plans.get(batch.table());
        if (plan.appendOnly) {
            copy(connection, plan, batch, plan.copyTarget, RowFilter.DIRECT, false, false, false);
            return;
        }
        boolean merge = mergeSupported && plan.mergeable && plan.target.updatable() && narrowRows(batch);
        boolean stageAll = !trustFreshKeys || (merge && batch.changes().size() <= SMALL_BATCH_CHANGES);
        RowFilter staged = stageAll ? RowFilter.STAGED : RowFilter.STAGED_TRUSTING_FRESH_KEYS;
        // merging, only fresh keys skip the staging table, and only in larger batches while they are trusted
        RowFilter direct = !merge ? RowFilter.DIRECT : stageAll ? RowFilter.NONE : RowFilter.DIRECT_FRESH;
        boolean anyStaged = false;
        boolean anyDirect = false;
        for (RowChange change : batch.changes()) {
            anyStaged |= staged.test(change);
            anyDirect |= direct.test(change);
        }
        if (anyStaged) {
            copy(connection, plan, batch, plan.copyStaging, staged, true, merge, false);
            if (batch.rowsWithUnavailableValues() > 0) {
                try (Statement statement = connection.createStatement()) {
                    statement.executeUpdate(plan.fill);
                    checkFilled(statement, plan);
                }
            }
            // prepared, so that after a few flushes pgjdbc keeps them prepared on the server, which
            // then plans them once per connection rather than at every flush
            try (PreparedStatement statement = connection.prepareStatement(merge ? plan.merge : plan.delete)) {
                statement.execute();
            }
        }
        if (anyDirect) {
            copy(connection, plan, batch, plan.copyTarget, direct, false, false, trustFreshKeys);
        }
        if (!merge && batch.rowsWithUnavailableValues() > 0) {
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate(plan.insertFromStaging);
            }
        }
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

    /** Which changes a COPY writes. */
    private enum RowFilter
    {
        /** Final rows with every value known: COPYed straight into the target. */
        DIRECT {
            @Override
            boolean test(RowChange change)
            {
                return !change.isDelete() && !change.hasUnavailableValues();
            }
        },
        /** Final rows of fresh keys with every value known. */
        DIRECT_FRESH {
            @Override
            boolean test(RowChange change)
            {
                return change.isFresh() && DIRECT.test(change);
            }
        },
        /** Nothing. */
        NONE {
            @Override
            boolean test(RowChange change)
            {
                return false;
            }
        },
        /** Keys to delete first and rows to fill from the target: every change. */
        STAGED {
            @Override
            boolean test(RowChange change)
            {
                return true;
            }
        },
        /** As {@link #STAGED}, but fresh rows need no delete. */
        STAGED_TRUSTING_FRESH_KEYS {
            @Override
            boolean test(RowChange change)
            {
                return change.isDelete() || !change.isFresh() || change.hasUnavailableValues();
            }
        };

        abstract boolean test(RowChange change);
    }

    /**
     * COPYs the changes {@code filter} selects, into the staging table or the target. Staged rows
     * carry their values when {@code stagedRowsWhole} (the merge applies them) or when they must be
     * filled; otherwise only their key. With {@code freshKeysTrusted}, a unique violation means a
     * fresh key existed after all.
     */
    private void copy(Connection connection, TablePlan plan, TableBatch batch, String copySql, RowFilter filter, boolean staging, boolean stagedRowsWhole, boolean freshKeysTrusted)
            throws SQLException
    {
        List<RowChange> changes = batch.changes();
        try {
            CopyLoader.copyIn(connection, copySql, format, writer -> {
                for (RowChange change : changes) {
                    if (filter.test(change)) {
                        if (staging) {
                            writeStagingRow(writer, plan, change, stagedRowsWhole);
                        }
                        else {
                            writeTargetRow(writer, plan, change);
                        }
                    }
                }
            });
        }
        catch (CopyRejectedException e) {
            RowChange change = nthMatching(changes, filter, e.row());
            if (change == null) {
                if (freshKeysTrusted && SqlErrors.UNIQUE_VIOLATION.equals(e.getSQLState())) {
                    throw new FreshKeyConflict(plan.target.id(), null);
                }
                throw e;
            }
            if (freshKeysTrusted && SqlErrors.UNIQUE_VIOLATION.equals(e.getSQLState())) {
                throw new FreshKeyConflict(plan.target.id(), change.key());
            }
            ErrorCode code = SqlErrors.classify(e);
            if (code != ErrorCode.DATA) {
                throw e;
            }
            throw new RowRejectedException(code, batch.table(), plan.target.id(), change, SqlErrors.copyColumn(e), SqlErrors.describe(e), e);
        }
        catch (SQLException e) {
            // Greenplum segments may not say which COPY line broke the unique index
            if (freshKeysTrusted && SqlErrors.UNIQUE_VIOLATION.equals(e.getSQLState())) {
                throw new FreshKeyConflict(plan.target.id(), null);
            }
            throw e;
        }
    }

    @Nullable
    private static RowChange nthMatching(List<RowChange> changes, RowFilter filter, long row)
    {
        long seen = 0;
        for (RowChange change : changes) {
            if (filter.test(change) && ++seen == row) {
                return change;
            }
        }
        return null;
    }

    /**
     * A staged row: the insert flag and the unavailable mask, then the columns. Rows to fill from
     * the target, and with {@code whole} every row that is not a delete, carry every value; the
     * others are only keys to delete, so only the key is written.
     */
    private void writeStagingRow(CsvWriter writer, TablePlan plan, RowChange change, boolean whole)
            throws SQLException
    {
        Object[] row = change.row();
        boolean fill = row != null && change.hasUnavailableValues();
        boolean full = fill || (whole && row != null);
        int column = -1;
        try {
            writer.writeBoolean(full);
            if (fill) {
                writer.writeText(mask(row));
            }
            else {
                writer.writeNull();
            }
            RowKey fillFrom = fill ? change.fillFrom().orElse(null) : null;
            for (int i = 0; i < plan.fillKeyPosition.length; i++) {
                int keyPosition = plan.fillKeyPosition[i];
                // the fill key column has the type of key column keyIndex in the staged columns
                int keyColumn = plan.source.keyIndex(keyPosition);
                writeValue(writer, plan, keyColumn, fillFrom == null ? null : fillFrom.value(keyPosition));
            }
            for (column = 0; column < plan.encoders.length; column++) {
                Object value;
                if (full) {
                    value = row[column];
                }
                else {
                    int keyPosition = plan.keyPosition[column];
                    value = keyPosition >= 0 ? change.key().value(keyPosition) : null;
                }
                writeValue(writer, plan, column, value);
            }
            writer.endRow();
        }
        catch (ValueEncodingException e) {
            throw encodingFailed(writer, plan, change, column, e);
        }
    }

    /** A final row with every value known, in the target's COPY column order (the source columns). */
    private static void writeTargetRow(CsvWriter writer, TablePlan plan, RowChange change)
            throws SQLException
    {
        Object[] row = change.row();
        int column = -1;
        try {
            for (column = 0; column < plan.encoders.length; column++) {
                writeValue(writer, plan, column, row[column]);
            }
            writer.endRow();
        }
        catch (ValueEncodingException e) {
            throw encodingFailed(writer, plan, change, column, e);
        }
    }

    private static void writeValue(CsvWriter writer, TablePlan plan, int column, @Nullable Object value)
    {
        if (value == null || value == UnavailableValue.INSTANCE) {
            writer.writeNull();
        }
        else {
            plan.encoders[column].encode(value, writer);
        }
    }

    private static SinkException encodingFailed(CsvWriter writer, TablePlan plan, RowChange change, int column, ValueEncodingException e)
    {
        writer.discardRow();
        String columnName = column >= 0 && column < plan.columns.size() ? plan.columns.get(column).name() : "?";
        String type = column >= 0 && column < plan.columns.size() ? plan.columns.get(column).declaredType() : "?";
        return new RowRejectedException(ErrorCode.DATA, plan.source.table(), plan.target.id(), change, columnName + " (" + type + ")", e.getMessage(), e);
    }

    private String mask(Object[] row)
    {
        mask.setLength(0);
        for (Object value : row) {
            mask.append(value == UnavailableValue.INSTANCE ? '1' : '0');
        }
        return mask.toString();
    }

    private void checkFilled(Statement statement, TablePlan plan)
            throws SQLException
    {
        List<String> problems = new ArrayList<>();
        try (ResultSet rows = statement.executeQuery(plan.unfilled)) {
            while (rows.next()) {
                String unavailable = rows.getString(1);
                List<String> key = new ArrayList<>();
                for (int i = 0; i < plan.target.primaryKey().size(); i++) {
                    key.add(rows.getString(i + 2));
                }
                List<String> columns = new ArrayList<>();
                for (int i = 0; i < unavailable.length() && i < plan.columns.size(); i++) {
                    if (unavailable.charAt(i) == '1') {
                        columns.add(plan.columns.get(i).name());
                    }
                }
                problems.add("key (" + String.join(", ", key) + ") column(s) " + columns);
            }
        }
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.DATA, "Cannot apply changes to " + plan.target.id() + ": the source did not send unchanged TOAST values and the target has no row to take them from: "
                    + String.join("; ", problems) + ". The target is missing rows the source has (was it loaded with a snapshot?); set REPLICA IDENTITY FULL on the source table to always get full rows.");
        }
    }

    /**
     * Stores the positions. On PostgreSQL the statement also returns the transaction's id, kept in
     * {@link #transactionId} to find out whether the transaction committed when the connection is
     * lost during {@code COMMIT}.
     */
    private void storePositions(Connection connection, Map<String, SourcePosition> positions)
            throws SQLException
    {
        transactionId = 0;
        if (positions.isEmpty()) {
            return;
        }
        List<String> statements = dialect.offsets().storeOffset(offsetsTable);
        for (SourcePosition position : new TreeMap<>(positions).values()) {
            for (String sql : statements) {
                try (PreparedStatement statement = connection.prepareStatement(sql)) {
                    statement.setString(1, position.offset());
                    statement.setString(2, sinkName);
                    statement.setString(3, position.partition());
                    boolean stored;
                    if (statement.execute()) {
                        try (ResultSet rows = statement.getResultSet()) {
                            stored = rows.next();
                            if (stored) {
                                transactionId = rows.getLong(1);
                            }
                        }
                    }
                    else {
                        stored = statement.getUpdateCount() > 0;
                    }
                    if (stored) {
                        break;
                    }
                }
            }
        }
    }

    /**
     * Commits. When the connection is lost during {@code COMMIT}, the server may have committed or
     * not; asking it on a new connection with {@code txid_status} (PostgreSQL 10+) tells which, so
     * that a committed batch is not applied a second time: a replay is harmless for tables with a
     * key, whose keys are deleted and written again, but a table without one
     * ({@code tables.without.key=append-only}) would get its rows twice. When the answer cannot be
     * had (Greenplum, an older server, no position stored), the failure is reported as it was.
     */
    private void commit(Connection connection, Batch batch)
            throws SQLException
    {
        try {
            connection.commit();
        }
        catch (SQLException e) {
            long transaction = transactionId;
            if (transaction == 0 || !connectionLost()) {
                throw e;
            }
            discardConnection();
            String status = transactionStatus(transaction, e);
            if (!"committed".equals(status)) {
                log.info("{} - the connection was lost while committing {} events; transaction {} is {}, so the batch is applied again",
                        sinkName, batch.events(), transaction, status == null ? "unknown" : status);
                throw e;
            }
            log.warn("{} - the connection was lost while committing {} events, but transaction {} committed: not applying them again",
                    sinkName, batch.events(), transaction);
        }
    }

    /** {@code committed}, {@code aborted}, or null when the server cannot say; waits while it is {@code in progress}. */
    @Nullable
    private String transactionStatus(long transaction, SQLException commitFailure)
    {
        try (Connection checking = connector.connect(); PreparedStatement statement = checking.prepareStatement("SELECT txid_status(?)")) {
            statement.setLong(1, transaction);
            for (int attempt = 0; ; attempt++) {
                String status;
                try (ResultSet rows = statement.executeQuery()) {
                    status = rows.next() ? rows.getString(1) : null;
                }
                // the old session may not have finished its commit yet
                if (!"in progress".equals(status) || attempt == 50) {
                    return "in progress".equals(status) ? null : status;
                }
                Thread.sleep(200);
            }
        }
        catch (SQLException e) {
            commitFailure.addSuppressed(e);
            return null;
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private Connection connection()
            throws SQLException
    {
        if (connection != null) {
            return connection;
        }
        Connection opened = connector.connect();
        try {
            opened.setAutoCommit(false);
            String version;
            try (Statement statement = opened.createStatement(); ResultSet rows = statement.executeQuery("SELECT version()")) {
                rows.next();
                version = rows.getString(1);
            }
            dialect = Dialect.forSetting(dialectSetting, version);
            mergeSupported = mergeAllowed && !dialect.isGreenplum() && opened.getMetaData().getDatabaseMajorVersion() >= 15;
            try (Statement statement = opened.createStatement()) {
                statement.execute(dialect.offsets().createOffsetsTable(offsetsTable));
                opened.commit();
            }
            catch (SQLException e) {
                // several sinks or tasks starting at once: CREATE TABLE IF NOT EXISTS is not atomic
                // and the loser fails on the catalog's unique index, or finds the row type taken;
                // the table exists then
                if (!SqlErrors.UNIQUE_VIOLATION.equals(e.getSQLState()) && !SqlErrors.DUPLICATE_TABLE.equals(e.getSQLState())
                        && !SqlErrors.DUPLICATE_OBJECT.equals(e.getSQLState())) {
                    throw e;
                }
                opened.rollback();
            }
            log.info("{} - connected to {} target ({})", sinkName, dialect, version);
        }
        catch (SQLException | RuntimeException e) {
            try {
                opened.close();
            }
            catch (SQLException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
        connection = opened;
        staged.clear();
        return opened;
    }

    private SinkException failed(SQLException e, String context)
    {
        rollback(e);
        if (SqlErrors.isTransient(e) || connectionLost()) {
            discardConnection();
            return new SinkException(ErrorCode.TRANSIENT, context + ": " + SqlErrors.describe(e), e);
        }
        String state = e.getSQLState();
        if (SqlErrors.UNDEFINED_TABLE.equals(state) || SqlErrors.UNDEFINED_COLUMN.equals(state)) {
            // the target changed under us: read the catalog again next time
            plans.clear();
            targets.clear();
        }
        return SqlErrors.translate(e, context);
    }

    private boolean connectionLost()
    {
        try {
            return connection == null || connection.isClosed() || !connection.isValid(5);
        }
        catch (SQLException e) {
            return true;
        }
    }

    private void rollback(Exception cause)
    {
        if (connection == null) {
            return;
        }
        try {
            connection.rollback();
        }
        catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private void discardConnection()
    {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (SQLException e) {
                log.debug("{} - closing a broken connection failed", sinkName, e);
            }
            connection = null;
        }
        staged.clear();
    }

    @Override
    public void close()
    {
        discardConnection();
    }

    /** The session no longer has a staging table it created. */
    private static final class StagingLost
            extends RuntimeException
    {
        StagingLost(SQLException cause)
        {
            super(SqlErrors.describe(cause), cause, false, false);
        }
    }

    /** A key the batch took for new exists in the target; the batch is applied again without that assumption. */
    private static final class FreshKeyConflict
            extends RuntimeException
    {
        final TableId table;
        final String key;

        FreshKeyConflict(TableId table, @Nullable RowKey key)
        {
            super("key " + key + " of " + table + " exists already", null, false, false);
            this.table = table;
            this.key = key == null ? "(not named by the server)" : key.toString();
        }
    }
}
