package io.pgsink.merge.write;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.RejectedRow;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.TableNameFormat;

import org.jetbrains.annotations.Nullable;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * {@code errors.tolerance}: under {@code all}, a row the target refuses is taken out of the batch
 * and the batch applied again without it, until it commits; the rows taken out go to the
 * dead-letter destination in the transaction that applies the rest. A refused row is found by the
 * failure itself where it names one ({@link RowRejectedException}: the COPY line, or the value the
 * encoder refused), else by bisecting the failing table's changes in transactions that are rolled
 * back. When more than a tenth of the batch (at least 100 rows) is refused, the failure is taken
 * for not being caused by single rows, and the sink stops.
 *
 * <p>Under {@code none}, a failure of a single row stops the sink: the row is isolated the same
 * way (in transactions that are rolled back), so that the failure names it; nothing is applied.
 *
 * <p>Stateless apart from its configuration.
 */
public final class RejectedRowIsolator
{
    /** How a transaction over a batch ends. */
    public enum Ending
    {
        COMMIT,
        /** A probe while isolating a refused row. */
        ROLLBACK,
    }

    /** Runs one transaction over a batch. */
    @FunctionalInterface
    public interface Transactions
    {
        /**
         * Applies {@code batch} in one transaction, writing {@code rejected} to the dead-letter
         * destination in it, and ends it as {@code ending} says.
         *
         * @throws TableFailure when applying a table's changes failed
         * @throws SinkException when anything else failed
         */
        void run(Batch batch, List<RejectedRow> rejected, Ending ending);
    }

    private final boolean tolerateRejectedRows;
    private final TableNameFormat routing;

    public RejectedRowIsolator(boolean tolerateRejectedRows, TableNameFormat routing)
    {
        this.tolerateRejectedRows = tolerateRejectedRows;
        this.routing = requireNonNull(routing, "routing is null");
    }

    /**
     * Applies the batch and commits it.
     *
     * @return the rows skipped: those the batch came with ({@link Batch#rejected()}) and those the
     *         target refused
     * @throws SinkException the failure, when it is not one of single rows or they are not tolerated
     */
    public List<RejectedRow> apply(Batch batch, Transactions transactions)
    {
        List<RejectedRow> rejected = new ArrayList<>();
        for (RejectedRow row : batch.rejected()) {
            rejected.add(new RejectedRow(row.table(), routing.targetOf(row.table()), row.schema(), row.change(),
                    row.column(), row.reason()));
        }
        int changes = 0;
        for (TableBatch table : batch.tables()) {
            changes += table.changes().size();
        }
        int maxRejected = Math.max(100, changes / 10);
        Batch current = batch;
        while (true) {
            try {
                transactions.run(current, rejected, Ending.COMMIT);
                return rejected;
            }
            catch (TableFailure failure) {
                RejectedRow row = rejectedRow(current, failure, transactions);
                rejected.add(row);
                current = without(current, row.table(), row.change());
            }
            if (rejected.size() > maxRejected) {
                throw new SinkException(ErrorCode.DATA, "Gave up applying a batch of " + batch.events()
                        + " events after the target refused " + rejected.size()
                        + " rows of it: the failure does not seem to be caused by single rows. First refused: "
                        + rejected.get(0).describe());
            }
        }
    }

    /**
     * The row at fault, when the failure is one of a single row and it may be skipped. Under
     * {@code errors.tolerance=none} the row is isolated all the same, to name it: the failure
     * thrown names table, key, column (where the server says which), source position and reason.
     */
    private RejectedRow rejectedRow(Batch batch, TableFailure failure, Transactions transactions)
    {
        SinkException cause = failure.failure();
        if (cause instanceof RowRejectedException row) {
            if (!tolerateRejectedRows) {
                throw cause;
            }
            return new RejectedRow(row.sourceTable(), row.targetTable(), schemaOf(batch, row.sourceTable()),
                    row.change(), row.column(), row.reason());
        }
        if (cause.errorCode() != ErrorCode.DATA) {
            throw cause;
        }
        TableId table = failure.table();
        Isolated isolated = isolate(batch, table, transactions);
        if (isolated.failure() instanceof RowRejectedException row) {
            // the statement that failed did not name the row and column, the probe's COPY did (see SmallBatchWriter)
            return rejectedRow(batch, new TableFailure(table, row), transactions);
        }
        // a statement over many rows fails on the first bad one it meets, maybe not this one: the probe that ends with
        // it says why it fails
        SinkException failed = isolated.failure() == null ? cause : isolated.failure();
        SQLException sql = failed.getCause() instanceof SQLException sqlCause ? sqlCause : null;
        RowChange bad = isolated.change();
        String reason = sql != null ? UniqueViolations.describe(sql) : failed.getMessage();
        Optional<String> column = Optional.ofNullable(sql == null ? null : SqlFailures.column(sql));
        RejectedRow row = new RejectedRow(table, routing.targetOf(table), schemaOf(batch, table), bad, column, reason);
        if (!tolerateRejectedRows) {
            throw new SinkException(ErrorCode.DATA, "Cannot write a row of " + row.describe(), failed.getCause());
        }
        return row;
    }

    /**
     * Finds a change of {@code table} the target refuses: the shortest failing prefix of its
     * changes ends with one. Each probe applies the tables the failed attempt applied (those
     * before {@code table}, which passed) and a prefix of {@code table}'s changes, and rolls back;
     * the tables after it are left out, since a refused row of theirs would fail every probe.
     */
    private static Isolated isolate(Batch batch, TableId table, Transactions transactions)
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
        SinkException lastFailure = null;
        while (failing - passing > 1) {
            int middle = (passing + failing) >>> 1;
            SinkException failure = failure(probed.withTable(tableBatch.withChanges(changes.subList(0, middle))),
                    transactions);
            if (failure != null) {
                failing = middle;
                lastFailure = failure;
            }
            else {
                passing = middle;
            }
        }
        if (lastFailure == null) {
            lastFailure = failure(probed.withTable(tableBatch.withChanges(changes.subList(0, failing))), transactions);
        }
        return new Isolated(changes.get(failing - 1), lastFailure);
    }

    /** The change a probe found, and how the last probe that failed failed, if one did. */
    private record Isolated(RowChange change, @Nullable SinkException failure) {}

    /** How {@code batch} fails in a transaction that is rolled back, or null when it does not. */
    @Nullable
    private static SinkException failure(Batch batch, Transactions transactions)
    {
        try {
            transactions.run(batch, List.of(), Ending.ROLLBACK);
            return null;
        }
        catch (TableFailure failure) {
            if (failure.failure().isTransient()) {
                throw failure.failure();
            }
            return failure.failure();
        }
        catch (SinkException e) {
            if (e.isTransient()) {
                throw e;
            }
            return e;
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

    private static TableSchema schemaOf(Batch batch, TableId table)
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
     * Applying the changes of one source table failed with {@link #failure()}; the table is where a
     * refused row is looked for. Never leaves {@link #apply}: callers get the cause.
     */
    public static final class TableFailure
            extends RuntimeException
    {
        private final TableId table;
        private final SinkException failure;

        public TableFailure(TableId table, SinkException failure)
        {
            super(failure.getMessage(), failure, false, false);
            this.table = requireNonNull(table, "table is null");
            this.failure = failure;
        }

        TableId table()
        {
            return table;
        }

        SinkException failure()
        {
            return failure;
        }
    }
}
