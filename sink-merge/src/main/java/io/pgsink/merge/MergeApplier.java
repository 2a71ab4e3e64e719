package io.pgsink.merge;


import com.zaxxer.hikari.metrics.MetricsTrackerFactory;
import io.pgsink.copy.load.CopyListener;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.buffer.RejectedRowHandler;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.plan.TablePlans;
import io.pgsink.merge.schema.TargetTables;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.session.TargetSession;
import io.pgsink.merge.session.TargetTransaction;
import io.pgsink.merge.session.TargetTransactions;
import io.pgsink.merge.state.MovedRows;
import io.pgsink.merge.state.PositionStore;
import io.pgsink.merge.state.WriterFence;
import io.pgsink.merge.state.WriterFencedException;
import io.pgsink.merge.write.MetadataValues;
import io.pgsink.merge.write.RejectedRowIsolator;
import io.pgsink.merge.write.StagingTables;
import io.pgsink.merge.write.TableWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
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
 * <p>The transaction of each flush, which orders the steps and decides what a failure means, is a
 * {@link FlushTransaction}; this class owns what outlives a flush (the writer generations claimed,
 * the stored positions) and wires the steps' owners together: the connection pool and its
 * transactions ({@link TargetSession}), the target tables made to exist and match each source
 * schema ({@link TargetTables}), the plans per source schema ({@link TablePlans}), the staging
 * tables per connection ({@link StagingTables}), the rows and statements per table
 * ({@link TableWriter}), and the rows the target refuses ({@link RejectedRowIsolator}).
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class MergeApplier
        implements BatchApplier
{
    private static final Logger log = LoggerFactory.getLogger(MergeApplier.class);

    private final String sinkName;
    private final PositionStore positions;
    private final WriterFence fence;
    /** The writer generations this applier claimed or holds, by fence; checked in every flush. */
    private final Map<String, Long> claims = new HashMap<>();
    private final TargetSession session;
    private final TargetTransactions transactions;
    private final RejectedRowIsolator isolator;
    private final ChangeMetadata changeMetadata;
    /** The transaction of each flush and its attempts. */
    private final FlushTransaction flush;

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
        this.positions = new PositionStore(config);
        this.fence = new WriterFence(config);
        this.session = new TargetSession(sinkName, builder.connector, config.targetDialect(), positions::createTable,
                builder.poolMetrics);
        StagingTables staging = new StagingTables();
        TargetTables targets = new TargetTables(config, builder.sourceColumns);
        TablePlans plans = new TablePlans(config, staging::newName);
        // a table or column gone: the target changed under us, read the catalog again next time
        this.transactions = new TargetTransactions(session, () -> {
            targets.forget();
            plans.forget();
        });
        this.changeMetadata = config.changeMetadata();
        this.isolator = new RejectedRowIsolator(config.toleratesRejectedRows(), config.tableNameFormat());
        this.flush = new FlushTransaction(builder, session, transactions, positions, fence, claims, staging, targets,
                plans);
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
        List<RejectedRow> rejected = isolator.apply(batch, flush::run);
        for (RejectedRow row : rejected) {
            log.warn("{} - skipped a row the target refused (errors.tolerance=all): {}", sinkName, row.describe());
        }
    }

    @Override
    public void close()
    {
        session.close();
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

        SinkConfig config()
        {
            return config;
        }

        Optional<RejectedRowHandler> rejectedRowHandler()
        {
            return rejectedRowHandler;
        }

        Function<SourcePosition, String> positionText()
        {
            return positionText;
        }

        CopyListener copyListener()
        {
            return copyListener;
        }

        @org.jetbrains.annotations.Nullable
        MovedRows.Moves moves()
        {
            return moves;
        }
    }
}
