package io.pgsink.merge;

import io.pgsink.copy.CopyListener;
import io.pgsink.copy.CsvWriter;
import io.pgsink.copy.SqlFailures;
import io.pgsink.core.CopyFormat;
import io.pgsink.core.NulCharacterHandling;
import io.pgsink.core.RowChange;
import io.pgsink.core.TableBatch;
import io.pgsink.merge.TableWriter.FreshKeys;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

import static java.util.Objects.requireNonNull;

/**
 * Writes a small table batch (at most {@code flush.small.batch.max.events} changes) without COPY
 * and staging table: its changes are bound as parameters, one text array per column, of one
 * statement that reads them with {@code unnest} ({@link SmallBatchSql}), so that the batch costs
 * one round trip, sent after the position (which carries the transaction's {@code BEGIN}) and
 * before the {@code COMMIT}: 3 per flush, where COPY into the staging table takes 5 (its statement
 * and its data are a round trip each). The statements are the staging table's:
 * <ul>
 * <li>merging, one {@code MERGE} deletes, updates or inserts each key (soft deletes mark the row);</li>
 * <li>otherwise the delete of the touched keys (not fresh ones) and the insert of the final
 *     rows, two statements sent together; a unique violation of the insert means a fresh key existed
 *     ({@link TableWriter.FreshKeyConflict}), as for COPY.</li>
 * </ul>
 * Values are encoded by the plan's COPY encoders ({@link CopyRows}, staged-row layout, metadata
 * columns included) into CSV, split into fields again here, and cast to the columns' types by the
 * server: the text of each value is the text COPY would have sent.
 *
 * <p>Not taken ({@link #takes}) where the COPY path must run: a Greenplum target, history and
 * append-only tables (not planned here at all), rows with unchanged TOAST values (filled from the
 * target through the staging table), and soft deletes without {@code MERGE}.
 *
 * <p>Not thread-safe: owned by the sink's thread (it reuses its buffers).
 */
final class SmallBatchWriter
{
    /** Pgsink's own CSV dialect for the values: only split again here, never sent. */
    private final CopyFormat format;
    private final int maxChanges;
    private final BooleanSupplier serverBindsSmallBatches;
    private final CopyRows rows;
    private final boolean softDeletes;
    private final CopyListener bytesListener;
    /** The CSV of the batch's rows; grows to the largest batch. */
    private byte[] csv = new byte[16 * 1024];
    private int csvLength;
    private byte[] field = new byte[256];

    /**
     * @param maxChanges {@code flush.small.batch.max.events}; 0 never takes the small path
     * @param serverBindsSmallBatches whether the dialect of the current connection lets small batches skip COPY
     * @param bytesListener told the bytes of the encoded values each batch binds, as COPY tells those it sends
     */
    SmallBatchWriter(int maxChanges, NulCharacterHandling nulHandling, BooleanSupplier serverBindsSmallBatches, MetadataValues metadata, boolean softDeletes, CopyListener bytesListener)
    {
        this.bytesListener = requireNonNull(bytesListener, "bytesListener is null");
        this.maxChanges = maxChanges;
        this.format = new CopyFormat(',', '"', '"', "", requireNonNull(nulHandling, "nulHandling is null"));
        this.serverBindsSmallBatches = requireNonNull(serverBindsSmallBatches, "serverBindsSmallBatches is null");
        this.rows = new CopyRows(metadata);
        this.softDeletes = softDeletes;
    }

    /**
     * Whether {@link #write} applies the batch: it is small, the server is PostgreSQL, no row waits
     * for unchanged TOAST values, and soft deletes have {@code MERGE}. A batch applied with every key
     * deleted first ({@link FreshKeys#DISTRUSTED}: a probe isolating a row the target refused, or
     * the replay after a {@link TableWriter.FreshKeyConflict}) takes the COPY path: a failed COPY
     * names the row's line and the column, where a failed statement names neither.
     *
     * @param merge whether the batch is merged ({@code MERGE}); else deleted and inserted
     */
    boolean takes(TablePlan plan, TableBatch batch, FreshKeys freshKeys, boolean merge)
    {
        return batch.changes().size() <= maxChanges
                && freshKeys == FreshKeys.TRUSTED
                && !plan.appendOnly && !plan.history
                && batch.rowsWithUnavailableValues() == 0
                && (merge || !softDeletes)
                && serverBindsSmallBatches.getAsBoolean();
    }

    /** Applies the batch's changes in the connection's transaction (see the class Javadoc). */
    void write(Connection connection, TablePlan plan, TableBatch batch, boolean merge)
            throws SQLException
    {
        List<RowChange> changes = batch.changes();
        encode(plan, changes);
        bytesListener.bytesSent(csvLength);
        int keyColumns = plan.target.primaryKey().size();
        // staged row: insert flag, unavailable mask, fill key columns, then the columns
        int firstColumn = 2 + keyColumns;
        int fields = firstColumn + plan.columns.size();
        String[][] values = split(changes.size(), fields);
        if (merge) {
            try (PreparedStatement statement = connection.prepareStatement(plan.small.merge())) {
                bindRows(connection, statement, 1, values, firstColumn, null);
                statement.execute();
            }
            return;
        }
        boolean[] deleted = new boolean[changes.size()];
        boolean[] inserted = new boolean[changes.size()];
        boolean anyDeleted = false;
        boolean anyInserted = false;
        for (int i = 0; i < deleted.length; i++) {
            RowChange change = changes.get(i);
            deleted[i] = RowFilter.STAGED_TRUSTING_FRESH_KEYS.test(change);
            inserted[i] = !change.isDelete();
            anyDeleted |= deleted[i];
            anyInserted |= inserted[i];
        }
        String sql = anyDeleted && anyInserted ? plan.small.deleteAndInsert()
                : anyDeleted ? plan.small.deleteKeys() : plan.small.insertRows();
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            int parameter = 1;
            if (anyDeleted) {
                for (int i = 0; i < keyColumns; i++) {
                    int column = plan.source.keyIndex(plan.fillKeyPosition[i]);
                    statement.setArray(parameter++, connection.createArrayOf("text", select(values[firstColumn + column], deleted)));
                }
            }
            if (anyInserted) {
                bindRows(connection, statement, parameter, values, firstColumn, inserted);
            }
            statement.execute();
        }
        catch (SQLException e) {
            if (SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState())) {
                // the server names the key only in the detail, which may hold values
                throw new TableWriter.FreshKeyConflict(plan.target.id(), null);
            }
            throw e;
        }
    }

    /** Binds the insert flags and the columns from {@code parameter} on, of the rows {@code selected} says (all when null). */
    private static void bindRows(Connection connection, PreparedStatement statement, int parameter, String[][] values, int firstColumn, boolean @Nullable [] selected)
            throws SQLException
    {
        statement.setArray(parameter++, connection.createArrayOf("text", select(values[0], selected)));
        for (int column = firstColumn; column < values.length; column++) {
            statement.setArray(parameter++, connection.createArrayOf("text", select(values[column], selected)));
        }
    }

    private static String[] select(String[] values, boolean @Nullable [] selected)
    {
        if (selected == null) {
            return values;
        }
        int count = 0;
        for (boolean chosen : selected) {
            count += chosen ? 1 : 0;
        }
        String[] chosen = new String[count];
        int next = 0;
        for (int i = 0; i < values.length; i++) {
            if (selected[i]) {
                chosen[next++] = values[i];
            }
        }
        return chosen;
    }

    /** Encodes every change as a staged row with all its values into {@link #csv}. */
    private void encode(TablePlan plan, List<RowChange> changes)
            throws SQLException
    {
        csvLength = 0;
        CsvWriter writer = new CsvWriter(format, this::append, 8 * 1024);
        for (RowChange change : changes) {
            rows.write(writer, plan, change, CopyRows.Layout.STAGED_ROWS);
        }
        writer.finish();
    }

    private void append(byte[] buffer, int offset, int length)
    {
        if (csvLength + length > csv.length) {
            csv = Arrays.copyOf(csv, Math.max(csv.length * 2, csvLength + length));
        }
        System.arraycopy(buffer, offset, csv, csvLength, length);
        csvLength += length;
    }

    /**
     * Splits {@link #csv} into values by field, then row: NULL for an unquoted empty field, the
     * text of a field otherwise (quotes removed, doubled quotes single).
     */
    private String[][] split(int rowCount, int fields)
    {
        String[][] values = new String[fields][rowCount];
        int position = 0;
        for (int row = 0; row < rowCount; row++) {
            for (int column = 0; ; column++) {
                String value;
                if (csv[position] == '"') {
                    int length = 0;
                    position++;
                    while (true) {
                        byte b = csv[position++];
                        if (b == '"') {
                            if (csv[position] != '"') {
                                break;
                            }
                            position++;
                        }
                        if (length == field.length) {
                            field = Arrays.copyOf(field, length * 2);
                        }
                        field[length++] = b;
                    }
                    value = new String(field, 0, length, StandardCharsets.UTF_8);
                }
                else {
                    int start = position;
                    while (csv[position] != ',' && csv[position] != '\n') {
                        position++;
                    }
                    value = position == start ? null : new String(csv, start, position - start, StandardCharsets.UTF_8);
                }
                values[column][row] = value;
                if (csv[position++] == '\n') {
                    if (column != fields - 1) {
                        throw new IllegalStateException("Row " + row + " of a small batch has " + (column + 1) + " fields, expected " + fields);
                    }
                    break;
                }
            }
        }
        return values;
    }
}
