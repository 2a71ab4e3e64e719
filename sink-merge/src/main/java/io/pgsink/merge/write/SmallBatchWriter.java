package io.pgsink.merge.write;

import io.pgsink.copy.load.CopyListener;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.buffer.TableBatch;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.NulCharacterHandling;
import io.pgsink.merge.plan.SmallBatchSql;
import io.pgsink.merge.plan.TablePlan;
import io.pgsink.merge.write.TableWriter.FreshKeys;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

import static java.util.Objects.requireNonNull;

/**
 * Writes a small table batch (at most {@code flush.small.batch.max.events} changes) without COPY
 * and staging table: its changes are bound as parameters, one text array per column, of one
 * statement that reads them with {@code unnest} ({@link SmallBatchSql}), so that the batch costs
 * one round trip, sent after the position (which carries the transaction's {@code BEGIN}) and
 * with the {@code COMMIT} where nothing follows it: 2 per flush, where COPY into the staging table
 * takes 4 (its statement and its data are a round trip each). The statements are the staging table's:
 * <ul>
 * <li>merging, one {@code MERGE} deletes, updates or inserts each key (soft deletes mark the row);</li>
 * <li>otherwise the delete of the touched keys (not fresh ones) and the insert of the final
 *     rows, two statements sent together; a unique violation of the insert means a fresh key existed
 *     ({@link TableWriter.FreshKeyConflict}), as for COPY.</li>
 * </ul>
 * Values are encoded by the plan's COPY encoders ({@link CopyRows}, staged-row layout, metadata
 * columns included) into CSV, split into fields again here, and bound per column as an array
 * literal of the column's type, or as a text array cast to it ({@link SmallBatchSql#bindsTyped}):
 * either way the server reads the text of each value that COPY would have sent, with the type's
 * input function.
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
    private byte[] unquoted = new byte[256];
    /** The batch's fields in {@link #csv}, row by row ({@link #split}). */
    private int rowCount;
    private int fieldCount;
    private int[] fieldStart = new int[0];
    private int[] fieldEnd = new int[0];
    private boolean[] fieldQuoted = new boolean[0];
    /** The array literal being built; grows to the largest. */
    private byte[] literal = new byte[4 * 1024];
    private int literalLength;

    /**
     * @param maxChanges {@code flush.small.batch.max.events}; 0 never takes the small path
     * @param serverBindsSmallBatches whether the dialect of the current connection lets small batches skip COPY
     * @param bytesListener told the bytes of the encoded values each batch binds, as COPY tells those it sends
     */
    SmallBatchWriter(int maxChanges, NulCharacterHandling nulHandling, BooleanSupplier serverBindsSmallBatches,
            MetadataValues metadata, boolean softDeletes, CopyListener bytesListener)
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

    /**
     * Applies the batch's changes in the connection's transaction (see the class Javadoc).
     *
     * @param commit appended to the statement: {@code "; COMMIT"} where it travels with the transaction's COMMIT
     *        ({@link io.pgsink.merge.session.ClosingStatement}), else empty
     */
    void write(Connection connection, TablePlan plan, TableBatch batch, boolean merge, String commit)
            throws SQLException
    {
        List<RowChange> changes = batch.changes();
        encode(plan, changes);
        bytesListener.bytesSent(csvLength);
        int keyColumns = plan.target.primaryKey().size();
        // staged row: insert flag, unavailable mask, fill key columns, then the columns
        int firstColumn = 2 + keyColumns;
        int fields = firstColumn + plan.columns.size();
        split(changes.size(), fields);
        if (merge) {
            try (PreparedStatement statement = connection.prepareStatement(plan.small.merge() + commit)) {
                bindRows(connection, statement, 1, plan, firstColumn, null);
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
        try (PreparedStatement statement = connection.prepareStatement(sql + commit)) {
            int parameter = 1;
            if (anyDeleted) {
                for (int i = 0; i < keyColumns; i++) {
                    int column = plan.source.keyIndex(plan.fillKeyPosition[i]);
                    bind(connection, statement, parameter++, firstColumn + column, plan.small.typedKeys().get(i),
                            deleted);
                }
            }
            if (anyInserted) {
                bindRows(connection, statement, parameter, plan, firstColumn, inserted);
            }
            statement.execute();
        }
        catch (SQLException e) {
            if (SqlFailures.UNIQUE_VIOLATION.equals(e.getSQLState()) && !UniqueViolations.beyondKey(plan.target, e)) {
                // the server names the key only in the detail, which may hold values
                throw new TableWriter.FreshKeyConflict(plan.target.id(), null);
            }
            throw e;
        }
    }

    /**
     * Binds the insert flags and the columns from {@code parameter} on, of the rows {@code selected} says (all when
     * null).
     */
    private void bindRows(Connection connection, PreparedStatement statement, int parameter, TablePlan plan,
            int firstColumn, boolean @Nullable [] selected)
            throws SQLException
    {
        bind(connection, statement, parameter++, 0, true, selected);
        for (int column = 0; column < plan.columns.size(); column++) {
            bind(connection, statement, parameter++, firstColumn + column, plan.small.typedColumns().get(column),
                    selected);
        }
    }

    /**
     * Binds field {@code field} of the rows {@code selected} says (all when null) as parameter
     * {@code parameter}: an array literal of the column's type, which the statement casts the
     * untyped parameter to ({@link SmallBatchSql#bindsTyped}), or a text array.
     */
    private void bind(Connection connection, PreparedStatement statement, int parameter, int field, boolean typed,
            boolean @Nullable [] selected)
            throws SQLException
    {
        if (typed) {
            statement.setObject(parameter, arrayLiteral(field, selected), Types.OTHER);
        }
        else {
            statement.setArray(parameter, connection.createArrayOf("text", texts(field, selected)));
        }
    }

    /**
     * The array literal of field {@code field} of the selected rows: {@code NULL}, or each value
     * double-quoted with its backslashes and double quotes escaped, so the server reads the text
     * of each value exactly as COPY would.
     */
    private String arrayLiteral(int field, boolean @Nullable [] selected)
    {
        literalLength = 0;
        appendLiteral((byte) '{');
        boolean first = true;
        for (int row = 0; row < rowCount; row++) {
            if (selected != null && !selected[row]) {
                continue;
            }
            if (!first) {
                appendLiteral((byte) ',');
            }
            first = false;
            int span = row * fieldCount + field;
            int start = fieldStart[span];
            int end = fieldEnd[span];
            if (start < 0) {
                appendLiteral((byte) 'N');
                appendLiteral((byte) 'U');
                appendLiteral((byte) 'L');
                appendLiteral((byte) 'L');
                continue;
            }
            appendLiteral((byte) '"');
            boolean quoted = fieldQuoted[span];
            for (int position = start; position < end; position++) {
                byte b = csv[position];
                if (quoted && b == '"') {
                    // a doubled quote inside a quoted CSV field
                    position++;
                }
                if (b == '"' || b == '\\') {
                    appendLiteral((byte) '\\');
                }
                appendLiteral(b);
            }
            appendLiteral((byte) '"');
        }
        appendLiteral((byte) '}');
        return new String(literal, 0, literalLength, StandardCharsets.UTF_8);
    }

    private void appendLiteral(byte b)
    {
        if (literalLength == literal.length) {
            literal = Arrays.copyOf(literal, literal.length * 2);
        }
        literal[literalLength++] = b;
    }

    /**
     * The values of field {@code field} of the selected rows: null, or the field's text (quotes removed, doubled quotes
     * single).
     */
    private String[] texts(int field, boolean @Nullable [] selected)
    {
        int count = rowCount;
        if (selected != null) {
            count = 0;
            for (boolean chosen : selected) {
                count += chosen ? 1 : 0;
            }
        }
        String[] values = new String[count];
        int next = 0;
        for (int row = 0; row < rowCount; row++) {
            if (selected != null && !selected[row]) {
                continue;
            }
            int span = row * fieldCount + field;
            int start = fieldStart[span];
            if (start < 0) {
                values[next++] = null;
                continue;
            }
            int end = fieldEnd[span];
            if (!fieldQuoted[span]) {
                values[next++] = new String(csv, start, end - start, StandardCharsets.UTF_8);
                continue;
            }
            int length = 0;
            for (int position = start; position < end; position++) {
                byte b = csv[position];
                if (b == '"') {
                    position++;
                }
                if (length == unquoted.length) {
                    unquoted = Arrays.copyOf(unquoted, length * 2);
                }
                unquoted[length++] = b;
            }
            values[next++] = new String(unquoted, 0, length, StandardCharsets.UTF_8);
        }
        return values;
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
     * Finds the fields of {@link #csv}, {@code fields} per row: where each starts and ends (within
     * its quotes, if quoted), or a start of -1 for NULL (an unquoted empty field).
     */
    private void split(int rows, int fields)
    {
        rowCount = rows;
        fieldCount = fields;
        int spans = rows * fields;
        if (fieldStart.length < spans) {
            fieldStart = new int[spans];
            fieldEnd = new int[spans];
            fieldQuoted = new boolean[spans];
        }
        int position = 0;
        int span = 0;
        for (int row = 0; row < rows; row++) {
            for (int column = 0; ; column++, span++) {
                if (csv[position] == '"') {
                    position++;
                    fieldStart[span] = position;
                    while (true) {
                        if (csv[position++] == '"') {
                            if (csv[position] != '"') {
                                break;
                            }
                            position++;
                        }
                    }
                    fieldEnd[span] = position - 1;
                    fieldQuoted[span] = true;
                }
                else {
                    int start = position;
                    while (csv[position] != ',' && csv[position] != '\n') {
                        position++;
                    }
                    fieldStart[span] = position == start ? -1 : start;
                    fieldEnd[span] = position;
                    fieldQuoted[span] = false;
                }
                if (csv[position++] == '\n') {
                    if (column != fields - 1) {
                        throw new IllegalStateException("Row " + row + " of a small batch has " + (column + 1)
                                + " fields, expected " + fields);
                    }
                    span++;
                    break;
                }
            }
        }
    }
}
