package io.pgsink.merge.write;

import io.pgsink.copy.load.CopyListener;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.copy.load.CopyRejectedException;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.write.CopyRowWriter;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.config.CopyDataFormat;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.write.TableWriter.FreshKeyConflict;
import io.pgsink.merge.write.TableWriter.FreshKeys;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.function.BooleanSupplier;

import static java.util.Objects.requireNonNull;

/**
 * One COPY of a table batch's changes, into the target or its staging table, for {@link TableWriter},
 * which decides which changes go where: picks binary or CSV for the rows at hand, streams the rows a
 * {@link RowFilter} selects, and tells what a refused row means (a replayed fresh key, a row at fault,
 * or a failure of the whole batch).
 *
 * <p>Not thread-safe: owned by the sink's thread (its {@link CopyRows} reuse a buffer).
 */
final class TableCopy
{
    private final CopyFormat format;
    private final CopyDataFormat dataFormat;
    private final BooleanSupplier serverReadsBinary;
    private final CopyListener copyListener;
    private final CopyRows rows;

    TableCopy(CopyFormat format, CopyDataFormat dataFormat, BooleanSupplier serverReadsBinary,
            CopyListener copyListener, MetadataValues metadata)
    {
        this.format = requireNonNull(format, "format is null");
        this.dataFormat = requireNonNull(dataFormat, "dataFormat is null");
        this.serverReadsBinary = requireNonNull(serverReadsBinary, "serverReadsBinary is null");
        this.copyListener = requireNonNull(copyListener, "copyListener is null");
        this.rows = new CopyRows(metadata);
    }

    /**
     * COPYs the changes {@code filter} selects, laid out as {@code layout} says. With
     * {@link FreshKeys#TRUSTED}, a unique violation means a fresh key existed after all.
     */
    void write(Connection connection, TablePlan plan, TableBatch batch, CopyRows.Layout layout, RowFilter filter,
            FreshKeys freshKeys)
            throws SQLException
    {
        List<RowChange> changes = batch.changes();
        boolean binary = binary(plan, changes, filter);
        String copySql = switch (layout) {
            case TARGET_ROWS -> binary ? plan.copyTargetBinary : plan.copyTarget;
            case STAGED_KEYS, STAGED_ROWS -> binary ? plan.copyStagingBinary : plan.copyStaging;
        };
        boolean conflictMeansReplay = switch (freshKeys) {
            case TRUSTED -> true;
            case DISTRUSTED -> false;
        };
        try {
            if (binary) {
                CopyLoader.copyInBinary(connection, copySql, format.nulHandling(),
                        writer -> writeRows(writer, plan, changes, filter, layout), copyListener);
            }
            else {
                CopyLoader.copyIn(connection, copySql, format,
                        writer -> writeRows(writer, plan, changes, filter, layout), copyListener);
            }
        }
        catch (CopyRejectedException e) {
            RowChange change = nthMatching(changes, filter, e.row());
            // a value another key's row holds in an index beyond the key: no fresh key existed
            boolean replay = conflictMeansReplay && SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState())
                    && !UniqueViolations.beyondKey(plan.target, e);
            if (change == null) {
                if (replay) {
                    throw new FreshKeyConflict(plan.target.id(), null);
                }
                throw e;
            }
            if (replay) {
                throw new FreshKeyConflict(plan.target.id(), change.key());
            }
            ErrorCode code = SqlFailures.classify(e);
            if (code != ErrorCode.DATA) {
                throw e;
            }
            throw new RowRejectedException(code, batch.table(), plan.target.id(), change, SqlFailures.column(e),
                    UniqueViolations.describe(e), SqlFailures.sanitized(e));
        }
        catch (SQLException e) {
            // Greenplum segments may not say which COPY line broke the unique index
            if (conflictMeansReplay && SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState())
                    && !UniqueViolations.beyondKey(plan.target, e)) {
                throw new FreshKeyConflict(plan.target.id(), null);
            }
            throw e;
        }
    }

    private void writeRows(CopyRowWriter writer, TablePlan plan, List<RowChange> changes, RowFilter filter,
            CopyRows.Layout layout)
            throws SQLException
    {
        for (RowChange change : changes) {
            if (filter.test(change)) {
                rows.write(writer, plan, change, layout);
            }
        }
    }

    /**
     * Whether this COPY is binary: {@code copy.format=binary}, a server that reads it, a binary
     * encoder for every column, and every value one the encoders write as CSV would give it (one
     * pass of class checks over the rows, before the COPY starts, since a COPY cannot change
     * format half-way).
     */
    private boolean binary(TablePlan plan, List<RowChange> changes, RowFilter filter)
    {
        // metadata columns (history tables, change metadata) are written as CSV: their values are made while writing
        if (dataFormat == CopyDataFormat.CSV || plan.binaryEncoders == null || plan.sourceColumns != plan.columns.size()
                || !serverReadsBinary.getAsBoolean()) {
            return false;
        }
        for (RowChange change : changes) {
            if (filter.test(change) && !CopyRows.acceptsBinary(plan, change)) {
                return false;
            }
        }
        return true;
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
    }}
