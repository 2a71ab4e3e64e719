package io.pgsink.merge;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.buffer.RejectedRowHandler;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.plan.TablePlans;
import io.pgsink.merge.schema.TargetTables;
import io.pgsink.merge.session.ClosingStatement;
import io.pgsink.merge.session.TargetSession;
import io.pgsink.merge.session.TargetTransaction;
import io.pgsink.merge.session.TargetTransactions;
import io.pgsink.merge.state.DeadLetterTable;
import io.pgsink.merge.state.FlushHead;
import io.pgsink.merge.state.MovedRows;
import io.pgsink.merge.state.PositionStore;
import io.pgsink.merge.state.WriterFence;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.write.FlushPhases.Phase;
import io.pgsink.merge.write.FlushPhases;
import io.pgsink.merge.write.MetadataValues;
import io.pgsink.merge.write.RejectedRowIsolator.Ending;
import io.pgsink.merge.write.RejectedRowIsolator.TableFailure;
import io.pgsink.merge.write.StagingTables;
import io.pgsink.merge.write.TableWriter.ApplyMethod;
import io.pgsink.merge.write.TableWriter.FreshKeyConflict;
import io.pgsink.merge.write.TableWriter.FreshKeys;
import io.pgsink.merge.write.TableWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The transaction of one flush, for {@link MergeApplier}, top-down: prepare (plan the tables,
 * create the staging tables), the positions and fence checks ({@link FlushHead}), the old rows of
 * key changes ({@link MovedRows}), per table its truncate and its rows ({@link TableWriter}), the
 * rejected rows, then commit (or, for a probe, roll back). A failure is attempted again where it
 * says how to succeed, else named by the table it happened in ({@link TableFailure}).
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
final class FlushTransaction
{
    // the applier's category, which users' log settings name
    private static final Logger log = LoggerFactory.getLogger(MergeApplier.class);

    private final String sinkName;
    /** Whether {@code target.update.mode} allows {@code MERGE}. */
    private final boolean mergeAllowed;
    private final Optional<RejectedRowHandler> rejectedRowHandler;
    private final PositionStore positions;
    private final WriterFence fence;
    /** The positions and fence checks a flush writes first, in one round trip. */
    private final FlushHead head;
    /** The writer generations the applier claimed or holds, by fence (the applier's map): checked in every flush. */
    private final Map<String, Long> claims;
    private final TargetSession session;
    private final TargetTransactions transactions;
    private final StagingTables staging;
    private final TargetTables targets;
    private final TablePlans plans;
    private final TableWriter writer;
    private final DeadLetterTable deadLetters;
    private final MetadataValues metadataValues;
    /**
     * The rows key changes move away, saved and taken in each flush ({@link MergeApplier.Builder#movedRows}); null
     * when not kept.
     */
    @org.jetbrains.annotations.Nullable
    private final MovedRows.Moves moves;
    private final MovedRows movedRows;

    FlushTransaction(MergeApplier.Builder options, TargetSession session, TargetTransactions transactions,
            PositionStore positions, WriterFence fence, Map<String, Long> claims, StagingTables staging,
            TargetTables targets, TablePlans plans)
    {
        SinkConfig config = options.config();
        this.sinkName = config.sinkName();
        this.mergeAllowed = config.mergesUpdates();
        this.rejectedRowHandler = options.rejectedRowHandler();
        this.positions = requireNonNull(positions, "positions is null");
        this.fence = requireNonNull(fence, "fence is null");
        this.head = new FlushHead(positions, fence);
        this.claims = requireNonNull(claims, "claims is null");
        this.session = requireNonNull(session, "session is null");
        this.transactions = requireNonNull(transactions, "transactions is null");
        this.staging = requireNonNull(staging, "staging is null");
        this.targets = requireNonNull(targets, "targets is null");
        this.plans = requireNonNull(plans, "plans is null");
        this.metadataValues = new MetadataValues(options.positionText());
        this.writer = new TableWriter(config, session::readsBinaryCopy, session::bindsSmallBatches,
                options.copyListener(), metadataValues);
        this.moves = options.moves();
        this.movedRows = new MovedRows(config);
        this.deadLetters = new DeadLetterTable(sinkName, SqlIdentifiers.quote(config.offsetsSchema()) + "."
                + SqlIdentifiers.quote(config.deadLetterTable()));
    }

    /**
     * One transaction over the batch, attempted again where the failure says how to succeed:
     * <ul>
     * <li>keys the buffer took for new were in the target already ({@link FreshKeyConflict}): the
     *     source replayed events applied before, so the batch is applied again with every key
     *     deleted first;</li>
     * <li>the session lost its staging tables ({@link StagingTables#isLost}): they are created
     *     again, once.</li>
     * </ul>
     * A probe (ending in a rollback) deletes every key first, since a fresh-key conflict would
     * pass for the row at fault.
     */
    void run(Batch batch, List<RejectedRow> rejected, Ending ending)
    {
        FreshKeys freshKeys = switch (ending) {
            case COMMIT -> FreshKeys.TRUSTED;
            case ROLLBACK -> FreshKeys.DISTRUSTED;
        };
        boolean stagingCreatedAgain = false;
        while (true) {
            try {
                attempt(batch, freshKeys, rejected, ending);
                return;
            }
            catch (FreshKeyConflict conflict) {
                log.info("{} - {} already holds key {} that the batch inserts (replayed events); applying the batch "
                        + "again with every key deleted first",
                        sinkName, conflict.table(), conflict.key());
                freshKeys = FreshKeys.DISTRUSTED;
            }
            catch (StagingLost lost) {
                if (stagingCreatedAgain) {
                    throw new SinkException(ErrorCode.TRANSIENT, "Cannot apply batch of " + batch.events()
                            + " events: the session lost its staging tables again right after they were created: "
                            + lost.getMessage(), lost.getCause());
                }
                log.info("{} - the session lost its staging tables ({}); creating them again", sinkName,
                        lost.getMessage());
                stagingCreatedAgain = true;
            }
        }
    }

    /** One transaction: every table, the positions, the rejected rows; then commit, or roll back. */
    private void attempt(Batch batch, FreshKeys freshKeys, List<RejectedRow> rejected, Ending ending)
    {
        TargetTransaction transaction = transactions.begin("Cannot apply batch of " + batch.events() + " events");
        TableBatch current = null;
        FlushPhases phases = new FlushPhases();
        boolean committed = false;
        // PostgreSQL keeps microseconds
        metadataValues.startFlush(Instant.now().truncatedTo(ChronoUnit.MICROS));
        try {
            Connection connection = transaction.connection();
            long start = System.nanoTime();
            if (!batch.positions().isEmpty()) {
                // before any table is locked: a running pgsink repair goes first
                positions.lockFlushes(connection, session.dialect(), false);
            }
            prepare(transaction, batch, freshKeys);
            targets.renameColumns(connection);
            start = phases.add(Phase.PREPARE, start);
            boolean positionsLast = session.dialect().offsets().storesPositionsLast();
            if (!positionsLast) {
                // first, so that the transaction's BEGIN travels with them: before a COPY, pgjdbc sends
                // BEGIN on its own and waits for the answer, a round trip of its own
                transaction.positionsStored(head.write(connection, session.dialect(), batch.positions(), claims));
                long headStart = start;
                start = phases.add(Phase.POSITIONS, start);
                // one round trip, with BEGIN: what a round trip to the target costs
                writer.roundTrip(start - headStart);
            }
            if (moves != null) {
                // the old rows of key changes, before the batch deletes them
                movedRows.write(connection, batch, moves, plans);
            }
            ApplyMethod method = applyMethod();
            // where nothing but COMMIT follows the last table's statements, its last statement travels with the
            // COMMIT, one round trip for both. Only in a flush that stores positions: its head locks the fence and
            // positions rows, so whoever comes next waits for its fate; a batch without positions (a repair's)
            // sends COMMIT on its own, so that it never commits after its client died (a statement waiting for a
            // lock, then COMMIT, would run to the end on the server)
            boolean closes = ending == Ending.COMMIT && !positionsLast && rejected.isEmpty()
                    && !batch.positions().isEmpty();
            Optional<ClosingStatement> closing = Optional.empty();
            List<TableBatch> tables = batch.tables();
            for (TableBatch table : tables) {
                current = table;
                if (table.truncate()) {
                    writer.truncate(connection, plans.route(table.table()));
                    start = phases.add(Phase.TRUNCATE, start);
                }
                if (!table.changes().isEmpty()) {
                    closing = writer.write(connection, plans.planned(table.table()), table, freshKeys, method,
                            closes && table == tables.get(tables.size() - 1), phases);
                    start = System.nanoTime();
                }
            }
            if (closing.isEmpty()) {
                current = null;
            }
            if (positionsLast) {
                transaction.positionsStored(positions.store(connection, session.dialect(), batch.positions()));
                fence.check(connection, claims);
                start = phases.add(Phase.POSITIONS, start);
            }
            if (!rejected.isEmpty()) {
                if (rejectedRowHandler.isPresent()) {
                    rejectedRowHandler.get().rejected(rejected);
                }
                else {
                    deadLetters.write(connection, session.dialect(), rejected);
                }
                start = phases.add(Phase.REJECTED, start);
            }
            switch (ending) {
                case COMMIT -> {
                    try {
                        transaction.commit(batch.events(), closing);
                    }
                    catch (SQLException e) {
                        if (!transaction.failedBeforeCommit()) {
                            // COMMIT's own failure (or a lost connection) is the batch's, not the last table's
                            current = null;
                        }
                        throw e;
                    }
                    current = null;
                    committed = true;
                    targets.committed();
                }
                case ROLLBACK -> transaction.rollback();
            }
            phases.add(Phase.COMMIT, start);
            if (log.isDebugEnabled()) {
                log.debug("{} - flush of {} events to {} tables ({}): {}", sinkName, batch.events(),
                        batch.tables().size(), method, phases);
            }
        }
        catch (SQLException e) {
            if (StagingTables.isLost(e)) {
                staging.forget(transaction);
                transaction.abandon(e);
                throw new StagingLost(e);
            }
            if (current == null) {
                throw transactions.failed(transaction, e, "Cannot apply batch of " + batch.events() + " events");
            }
            throw new TableFailure(current.table(),
                    transactions.failed(transaction, e, "Cannot apply changes to " + plans.route(current.table())
                            + " (from " + current.table() + ")"));
        }
        catch (SinkException e) {
            transaction.abandon(e);
            throw current == null ? e : new TableFailure(current.table(), e);
        }
        catch (RuntimeException e) {
            transaction.abandon(e);
            throw e;
        }
        finally {
            if (!committed) {
                plans.forget(targets.rolledBack());
            }
        }
    }

    /**
     * How staged changes to keys the target may hold are applied, by {@code target.update.mode} and what the server
     * offers.
     */
    private ApplyMethod applyMethod()
    {
        if (!mergeAllowed) {
            return ApplyMethod.DELETE_INSERT;
        }
        if (session.supportsMerge()) {
            return ApplyMethod.MERGE;
        }
        return session.supportsUpsert() ? ApplyMethod.UPSERT : ApplyMethod.DELETE_INSERT;
    }

    /**
     * Plans the batch's tables and creates the staging tables they need and the connection lacks,
     * committed before the data transaction starts. A schema version not planned yet first makes
     * its target table exist and match ({@link TargetTables#ensure}), then is planned for it.
     */
    private void prepare(TargetTransaction transaction, Batch batch, FreshKeys freshKeys)
            throws SQLException
    {
        List<TablePlan> staged = new ArrayList<>();
        for (TableBatch table : batch.tables()) {
            if (table.schema().isPresent() && !table.changes().isEmpty()) {
                TableSchema schema = table.schema().get();
                TablePlan plan = plans.current(schema);
                if (plan == null) {
                    TargetTable target = targets.ensure(transaction.connection(), session.dialect(), schema,
                            plans.lastPlanned(schema.table()));
                    plan = plans.plan(session.dialect(), schema, target);
                }
                if (TableWriter.stages(plan, table, freshKeys)) {
                    staged.add(plan);
                }
            }
        }
        staging.prepare(transaction, staged);
    }

    /** The session no longer has a staging table it created. */
    private static final class StagingLost
            extends RuntimeException
    {
        StagingLost(SQLException cause)
        {
            super(SqlFailures.describe(cause), cause, false, false);
        }
    }
}
