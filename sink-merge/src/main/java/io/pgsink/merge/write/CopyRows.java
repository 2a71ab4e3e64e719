package io.pgsink.merge.write;

import io.pgsink.copy.encode.binary.BinaryValueEncoder;
import io.pgsink.copy.write.BinaryCopyWriter;
import io.pgsink.copy.write.CopyRowWriter;
import io.pgsink.copy.write.CsvWriter;
import io.pgsink.copy.write.ValueEncodingException;
import io.pgsink.core.buffer.RowChange;
import io.pgsink.core.change.RowKey;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.plan.TablePlan;
import org.jetbrains.annotations.Nullable;

import java.sql.SQLException;

import static java.util.Objects.requireNonNull;

/**
 * Encodes a change as one CSV row of a COPY, in the layout the COPY's table has, through the
 * plan's encoders (indexed by column, nothing looked up per row): the source columns, then the
 * metadata columns ({@link MetadataValues}). A value the encoder refuses
 * becomes a {@link RowRejectedException} naming the column and its type, and the row is dropped
 * from the writer.
 *
 * <p>Not thread-safe: owned by the sink's thread (it reuses a buffer for the unavailable masks).
 */
final class CopyRows
{
    /** What the rows of one COPY hold. */
    enum Layout
    {
        /** Final rows, in the target's COPY column order (the source columns). */
        TARGET_ROWS,
        /** Staged changes by key; only rows to fill from the target carry their values. */
        STAGED_KEYS,
        /** Staged changes with every value of every row that is not a delete, for the MERGE. */
        STAGED_ROWS,
    }

    private final StringBuilder mask = new StringBuilder();
    private final MetadataValues metadata;

    CopyRows(MetadataValues metadata)
    {
        this.metadata = requireNonNull(metadata, "metadata is null");
    }

    /** Writes {@code change} as one row of {@code layout}. */
    void write(CopyRowWriter writer, TablePlan plan, RowChange change, Layout layout)
            throws SQLException
    {
        switch (layout) {
            case TARGET_ROWS -> writeTargetRow(writer, plan, change);
            case STAGED_KEYS, STAGED_ROWS -> writeStagingRow(writer, plan, change, layout);
        }
    }

    /**
     * A staged row: the insert flag and the unavailable mask, then the columns. Rows to fill from
     * the target, and in {@link Layout#STAGED_ROWS} every row that is not a delete, carry every
     * value; the others are only keys to delete, so only the key is written.
     */
    private void writeStagingRow(CopyRowWriter writer, TablePlan plan, RowChange change, Layout layout)
            throws SQLException
    {
        Object[] row = change.row();
        boolean fill = row != null && change.hasUnavailableValues();
        boolean full = fill || (layout == Layout.STAGED_ROWS && row != null);
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
                if (column >= plan.sourceColumns) {
                    // every staged change carries its metadata: a soft delete writes it into the kept row
                    value = metadata.value(plan.metadataKinds[column - plan.sourceColumns], change);
                }
                else if (full) {
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
    private void writeTargetRow(CopyRowWriter writer, TablePlan plan, RowChange change)
            throws SQLException
    {
        Object[] row = change.row();
        int column = -1;
        try {
            for (column = 0; column < plan.sourceColumns; column++) {
                writeValue(writer, plan, column, row[column]);
            }
            for (; column < plan.encoders.length; column++) {
                writeValue(writer, plan, column,
                        metadata.value(plan.metadataKinds[column - plan.sourceColumns], change));
            }
            writer.endRow();
        }
        catch (ValueEncodingException e) {
            throw encodingFailed(writer, plan, change, column, e);
        }
    }

    private static void writeValue(CopyRowWriter writer, TablePlan plan, int column, @Nullable Object value)
    {
        if (value == null || value == UnavailableValue.INSTANCE) {
            writer.writeNull();
        }
        else if (writer instanceof BinaryCopyWriter binary) {
            plan.binaryEncoders[column].encode(value, binary);
        }
        else {
            plan.encoders[column].encode(value, (CsvWriter) writer);
        }
    }

    /**
     * Whether every value {@link #write} may take from {@code change} (row, key and the key to fill
     * from) has a binary form that gives the target what CSV would: the plan has
     * {@link TablePlan#binaryEncoders} and each accepts its value.
     */
    static boolean acceptsBinary(TablePlan plan, RowChange change)
    {
        BinaryValueEncoder[] encoders = plan.binaryEncoders;
        Object[] row = change.row();
        if (row != null) {
            for (int column = 0; column < encoders.length; column++) {
                if (!accepts(encoders[column], row[column])) {
                    return false;
                }
            }
        }
        RowKey fillFrom = row != null && change.hasUnavailableValues() ? change.fillFrom().orElse(null) : null;
        for (int column = 0; column < encoders.length; column++) {
            int keyPosition = plan.keyPosition[column];
            if (keyPosition >= 0 && (!accepts(encoders[column], change.key().value(keyPosition))
                    || (fillFrom != null && !accepts(encoders[column], fillFrom.value(keyPosition))))) {
                return false;
            }
        }
        return true;
    }

    private static boolean accepts(BinaryValueEncoder encoder, @Nullable Object value)
    {
        return value == null || value == UnavailableValue.INSTANCE || encoder.accepts(value);
    }

    private static SinkException encodingFailed(CopyRowWriter writer, TablePlan plan, RowChange change, int column,
            ValueEncodingException e)
    {
        writer.discardRow();
        String columnName = column >= 0 && column < plan.columns.size() ? plan.columns.get(column).name() : "?";
        String type = column >= 0 && column < plan.columns.size() ? plan.columns.get(column).declaredType() : "?";
        return new RowRejectedException(ErrorCode.DATA, plan.source.table(), plan.target.id(), change, columnName + " ("
                + type + ")", e.getMessage(), e);
    }

    private String mask(Object[] row)
    {
        mask.setLength(0);
        for (Object value : row) {
            mask.append(value == UnavailableValue.INSTANCE ? '1' : '0');
        }
        return mask.toString();
    }

}
