package io.pgsink.merge;

import io.pgsink.core.change.TableSchema;

import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import io.pgsink.copy.load.CopyListener;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.buffer.RejectedRowHandler;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.plan.TablePlans;
import io.pgsink.merge.schema.TargetTables;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.session.TargetSession;
import io.pgsink.merge.session.TargetTransaction;
import io.pgsink.merge.session.TargetTransactions;
import io.pgsink.merge.state.DeadLetterTable;
import io.pgsink.merge.state.FlushHead;
import io.pgsink.merge.state.MovedRows;
import io.pgsink.merge.state.PositionStore;
import io.pgsink.merge.state.WriterFence;
import io.pgsink.merge.state.WriterFencedException;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.write.FlushPhases.Phase;
import io.pgsink.merge.write.FlushPhases;
import io.pgsink.merge.write.MetadataValues;
import io.pgsink.merge.write.RejectedRowIsolator.Ending;
import io.pgsink.merge.write.RejectedRowIsolator.TableFailure;
import io.pgsink.merge.write.RejectedRowIsolator;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * Applies merged batches to a PostgreSQL or Greenplum target, one transaction per batch:
 * <ol>
 * <li>per table, in table order: {@code TRUNCATE} when the batch truncates it; {@code COPY} the
 *     merged rows (final rows and deleted keys) into the table's staging table; fill unchanged
 *     TOAST values from the current target rows; delete every touched key; insert every final row
 *     ({@link TableWriter});</li>
 * <li>store the batch's source positions in the offsets table ({@link PositionStore});</li>
 * <li>commit ({@link TargetTransaction#commit}).</li>
 * </ol>
 * A crash at any point leaves either the whole batch with its positions or none of it. Replaying a
 * batch gives the same state, since it deletes every key it writes.
 *
 * <p>This class only orders the steps and decides what a failure means; each step has an owner:
 * the connection pool and its transactions ({@link TargetSession}), the target tables made to exist
 * and match each source schema ({@link TargetTables}), the plans per source schema
 * ({@link TablePlans}), the staging tables per connection ({@link StagingTables}), the rows and
 * statements per table ({@link TableWriter}), and the rows the target refuses
 * ({@link RejectedRowIsolator}).
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class MergeApplier
        implements BatchApplier
{
    private static final Logger log = LoggerFactory.getLogger(MergeApplier.class);

    private final String sinkName;
    /** Whether {@code target.update.mode} allows {@code MERGE}. */
    private final boolean mergeAllowed;
    private final Optional<RejectedRowHandler> rejectedRowHandler;
    private final PositionStore positions;
    private final WriterFence fence;
    /** The positions and fence checks a flush writes first, in one round trip. */
    private final FlushHead head;
    /** The writer generations this applier claimed or holds, by fence; checked in every flush. */
    private final Map<String, Long> claims = new HashMap<>();
    private final TargetSession session;
    private final TargetTransactions transactions;
    private final StagingTables staging = new StagingTables();
    private final TargetTables targets;
    private final TablePlans plans;
    private final TableWriter writer;
    private final RejectedRowIsolator isolator;
    private final DeadLetterTable deadLetters;
    private final ChangeMetadata changeMetadata;
    private final MetadataValues metadataValues;
    /**
     * The rows key changes move away, saved and taken in each flush ({@link Builder#movedRows}); null when not kept.
     */
    @org.jetbrains.annotations.Nullable
    private final MovedRows.Moves moves;
    private final MovedRows movedRows;

    public MergeApplier(SinkConfig config)
    {
        this(builder(config));
    }

    /**
     * With {@code connector} opening the pool's physical connections:
     * {@code builder(config).connector(connector).build()}.
     */
    public MergeApplier(SinkConfig config, TargetConnector connector)
    {
        this(builder(config).connector(connector));
    }

    private MergeApplier(Builder builder)
    {
        SinkConfig config = builder.config;
        this.sinkName = config.sinkName();
        this.mergeAllowed = config.mergesUpdates();
        this.rejectedRowHandler = builder.rejectedRowHandler;
        this.positions = new PositionStore(config);
        this.fence = new WriterFence(config);
        this.head = new FlushHead(positions, fence);
        this.session = new TargetSession(sinkName, builder.connector, config.targetDialect(), positions::createTable,
                builder.poolMetrics);
        this.targets = new TargetTables(config, builder.sourceColumns);
        this.plans = new TablePlans(config, staging::newName);
        // a table or column gone: the target changed under us, read the catalog again next time
        this.transactions = new TargetTransactions(session, () -> {
            targets.forget();
            plans.forget();
        });
        this.changeMetadata = config.changeMetadata();
        this.metadataValues = new MetadataValues(builder.positionText);
        this.writer = new TableWriter(config, session::readsBinaryCopy, session::bindsSmallBatches,
                builder.copyListener, metadataValues);
        this.isolator = new RejectedRowIsolator(config.toleratesRejectedRows(), config.tableNameFormat());
        this.moves = builder.moves;
        this.movedRows = new MovedRows(config);
        this.deadLetters = new DeadLetterTable(sinkName, SqlIdentifiers.quote(config.offsetsSchema()) + "."
                + SqlIdentifiers.quote(config.deadLetterTable()));
    }

    public static Builder builder(SinkConfig config)
    {
        return new Builder(config);
    }

    /** The dialect detected on the current (or last) connection. */
    public Dialect dialect()
    {
        return session.dialect();
    }

    @Override
    public boolean appendsHistory(TableId table)
    {
        return changeMetadata.isHistory(table);
    }

    @Override
    public Map<String, SourcePosition> committedPositions()
    {
        // read-only: nothing stored, nothing to settle
        return transactions.run("Cannot read stored positions of sink '" + sinkName + "' from "
                + positions.qualifiedTable(), positions::read);
    }

    /**
     * Claims {@code fence} for this writer (see {@link WriterFence}): raises its generation, in a
     * transaction of its own, and from then on checks it in every flush, which fails with
     * {@link WriterFencedException} once another writer with the same {@code sink.name} claimed it
     * since. The standalone service claims the whole sink ({@code ""}) when it starts; a Kafka
     * Connect task each partition it is given.
     *
     * @return the generation claimed
     */
    public long claim(String fenceName)
    {
        requireNonNull(fenceName, "fenceName is null");
        String context = "Cannot claim the writer generation of sink '" + sinkName + "'"
                + (fenceName.isEmpty() ? "" : " for " + fenceName) + " in " + positions.qualifiedTable();
        for (int attempt = 1; ; attempt++) {
            long generation;
            try {
                generation = transactions.run(context, connection -> fence.claim(connection, fenceName));
            }
            catch (SinkException e) {
                if (attempt < 3 && e.getCause() instanceof SQLException cause && WriterFence.isRace(cause)) {
                    // another writer claimed the same fence for the first time at once: claim again
                    continue;
                }
                throw e;
            }
            claims.put(fenceName, generation);
            log.info("{} - claimed writer generation {}{}: a writer with this sink.name that claimed before stops at "
                    + "its next flush", sinkName, generation,
                    fenceName.isEmpty() ? "" : " of " + fenceName);
            return generation;
        }
    }

    /**
     * Checks {@code generation}, claimed before (by an earlier applier of the same writer), in every flush, without
     * claiming anew.
     */
    public void hold(String fenceName, long generation)
    {
        claims.put(requireNonNull(fenceName, "fenceName is null"), generation);
    }

    /** Stops checking {@code fence}: the writer gave it up (a Kafka Connect task's partition was closed). */
    public void release(String fenceName)
    {
        claims.remove(fenceName);
    }

    /**
     * Deletes every position stored for the sink, so that the next start loads the source anew
     * ({@code pgsink reset}); returns how many there were.
     */
    public int forgetPositions()
    {
        return transactions.run("Cannot delete the stored positions of sink '" + sinkName + "' from "
                + positions.qualifiedTable(), positions::delete);
    }

    /**
     * Applies the batch. Under {@code errors.tolerance=all}, a row the target refuses is taken out
     * of the batch and the batch applied again without it (see {@link RejectedRowIsolator}); the
     * skipped rows go to the dead-letter destination in the transaction that applies the rest.
     */
    @Override
    public void apply(Batch batch)
    {
        List<RejectedRow> rejected = isolator.apply(batch, this::transaction);
        for (RejectedRow row : rejected) {
            log.warn("{} - skipped a row the target refused (errors.tolerance=all): {}", sinkName, row.describe());
        }
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
    private void transaction(Batch batch, List<RejectedRow> rejected, Ending ending)
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
            for (TableBatch table : batch.tables()) {
                current = table;
                if (table.truncate()) {
                    writer.truncate(connection, plans.route(table.table()));
                    start = phases.add(Phase.TRUNCATE, start);
                }
                if (!table.changes().isEmpty()) {
                    writer.write(connection, plans.planned(table.table()), table, freshKeys, method, phases);
                    start = System.nanoTime();
                }
            }
            current = null;
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
                    transaction.commit(batch.events());
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

    @Override
    public void close()
    {
        session.close();
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

    /**
     * Options of a {@link MergeApplier} beyond its {@link SinkConfig}. Not thread-safe; build once.
     */
    public static final class Builder
    {
        private final SinkConfig config;
        private TargetConnector connector;
        @org.jetbrains.annotations.Nullable
        private MovedRows.Moves moves;
        private Optional<RejectedRowHandler> rejectedRowHandler = Optional.empty();
        private CopyListener copyListener = CopyListener.NONE;
        private Optional<MetricsTrackerFactory> poolMetrics = Optional.empty();
        private SourceColumns sourceColumns = SourceColumns.UNKNOWN;
        private Function<SourcePosition, String> positionText = MetadataValues.PARTITION_AND_OFFSET;

        private Builder(SinkConfig config)
        {
            this.config = requireNonNull(config, "config is null");
            this.connector = TargetConnector.fromConfig(config);
        }

        /** How physical connections to the target are opened; {@link TargetConnector#fromConfig} by default. */
        public Builder connector(TargetConnector connector)
        {
            this.connector = requireNonNull(connector, "connector is null");
            return this;
        }

        /**
         * Under {@code errors.tolerance=all}, receives the rows skipped in a batch (before it
         * commits); without one they go to the dead-letter table ({@code errors.deadletter.table})
         * in the same transaction.
         */
        public Builder rejectedRowHandler(RejectedRowHandler rejectedRowHandler)
        {
            this.rejectedRowHandler = Optional.of(requireNonNull(rejectedRowHandler, "rejectedRowHandler is null"));
            return this;
        }

        /**
         * How a change's position is written into {@code metadata.source.position.column}; by
         * default {@code <partition>:<offset>} (Kafka Connect's {@code orders-3:4711}). Called per
         * row on the sink's thread.
         */
        public Builder positionText(Function<SourcePosition, String> positionText)
        {
            this.positionText = requireNonNull(positionText, "positionText is null");
            return this;
        }

        /** Told the bytes every COPY sends, on the sink's thread (see {@link CopyListener}). */
        public Builder copyListener(CopyListener copyListener)
        {
            this.copyListener = requireNonNull(copyListener, "copyListener is null");
            return this;
        }

        /**
         * Where the target connection pool reports its metrics (HikariCP's, e.g.
         * {@code MicrometerMetricsTrackerFactory}); none by default. The pool is named
         * {@code pgsink-<sink name>}.
         */
        public Builder poolMetrics(MetricsTrackerFactory poolMetrics)
        {
            this.poolMetrics = Optional.of(requireNonNull(poolMetrics, "poolMetrics is null"));
            return this;
        }

        /**
         * The source database's catalog, where the adapter can read it: lets
         * {@code schema.evolution} tell renamed source columns from dropped and added ones, and
         * learn what existing rows hold in a column added with a function default. Without it,
         * such changes stop the sink.
         */
        public Builder sourceColumns(SourceColumns sourceColumns)
        {
            this.sourceColumns = requireNonNull(sourceColumns, "sourceColumns is null");
            return this;
        }

        /**
         * Saves the old rows of the key changes {@code moves} names in each flush, and deletes the
         * saved rows the batch's creates took ({@link MovedRows}), in the flush's transaction.
         */
        public Builder movedRows(MovedRows.Moves moves)
        {
            this.moves = requireNonNull(moves, "moves is null");
            return this;
        }

        public MergeApplier build()
        {
            return new MergeApplier(this);
        }
    }
}
