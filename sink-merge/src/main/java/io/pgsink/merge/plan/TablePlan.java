package io.pgsink.merge.plan;

import io.pgsink.copy.encode.binary.BinaryValueEncoder;
import io.pgsink.copy.encode.binary.BinaryValueEncoders;
import io.pgsink.copy.encode.text.ValueEncoder;
import io.pgsink.copy.encode.text.ValueEncoders;
import io.pgsink.copy.load.CopyLoader;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.HistoryTables;
import io.pgsink.merge.schema.MetadataColumns;
import io.pgsink.merge.table.StagingColumns;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import org.jetbrains.annotations.Nullable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static java.util.Objects.requireNonNull;

/**
 * Everything a flush needs to apply rows of one source schema version to one target table,
 * resolved and checked once: the staged columns in source order followed by the metadata columns
 * ({@link MetadataColumns}), their encoders (the hot loop indexes this array), and the SQL.
 */
public final class TablePlan
{
    public final TableSchema source;
    public final TargetTable target;
    public final boolean appendOnly;
    /**
     * Whether every change is appended to the target as a row of its own (a history table, see {@link HistoryTables}).
     */
    public final boolean history;
    /** Source columns, then metadata columns. */
    public final List<TargetColumn> columns;
    /** How many of {@link #columns} are source columns; the others are metadata columns. */
    public final int sourceColumns;
    /** For each metadata column (index {@code i - sourceColumns} of {@link #columns}), what it holds. */
    public final ChangeMetadata.Kind[] metadataKinds;
    public final ValueEncoder[] encoders;
    /**
     * The binary encoders of the staged columns, or null when one of them has none (the table is always copied as CSV).
     */
    @Nullable
    public final BinaryValueEncoder[] binaryEncoders;
    /** For each staged column, its position in the key, or -1. */
    public final int[] keyPosition;
    /** For each fill-key column (target key order), the position in the source key. */
    public final int[] fillKeyPosition;
    public final String stagingName;
    public final String createStaging;
    /** COPY of final rows straight into the target. */
    public final String copyTarget;
    /** COPY into the staging table: insert flag, unavailable mask, columns. */
    public final String copyStaging;
    /** {@link #copyTarget} and {@link #copyStaging} in binary format. */
    public final String copyTargetBinary;
    public final String copyStagingBinary;
    public final String fill;
    public final String unfilled;
    public final String delete;
    public final String insertFromStaging;
    /**
     * Deletes, updates and inserts every staged change in one statement (PostgreSQL 15+, see
     * {@link Statements#mergeFromStaging}).
     */
    public final String merge;
    /** Deletes the staged deletes, and upserts every other staged row (see {@code TableWriter.ApplyMethod#UPSERT}). */
    public final String upsert;
    /** The statements of batches small enough to bind as arrays ({@code SmallBatchWriter}). */
    public final SmallBatchSql small;
    /**
     * Whether {@link #merge} may apply this table's rows: not when a staged column other than the
     * key is {@code GENERATED ALWAYS AS IDENTITY}, which COPY writes as given but an UPDATE cannot;
     * nor when the target has unique indexes beyond its primary key ({@link TargetTable#uniqueIndexes}).
     * An update in place checks them row by row, so the final rows of a valid source transaction
     * that swaps or rotates unique values collide with rows not yet updated; deleting every
     * touched key first, then inserting the final rows, never does.
     */
    public final boolean mergeable;

    private TablePlan(TableSchema source, TargetTable target, boolean appendOnly, List<TargetColumn> sourceColumns,
            ChangeMetadata metadata, List<TargetColumn> metadataColumns,
            boolean history, String stagingName, Dialect dialect, CopyFormat format)
    {
        this.source = source;
        this.target = target;
        this.appendOnly = appendOnly;
        this.history = history;
        List<TargetColumn> columns = new ArrayList<>(sourceColumns);
        columns.addAll(metadataColumns);
        this.columns = List.copyOf(columns);
        this.sourceColumns = sourceColumns.size();
        this.metadataKinds = new ChangeMetadata.Kind[metadataColumns.size()];
        for (int i = 0; i < metadataKinds.length; i++) {
            metadataKinds[i] = metadata.columns().get(i).kind();
        }
        boolean softDelete = metadata.softDeletes();
        this.encoders = new ValueEncoder[columns.size()];
        BinaryValueEncoder[] binary = new BinaryValueEncoder[columns.size()];
        this.keyPosition = new int[columns.size()];
        for (int i = 0; i < columns.size(); i++) {
            encoders[i] = ValueEncoders.forType(columns.get(i).encodingType());
            binary[i] = BinaryValueEncoders.forType(columns.get(i).encodingType()).orElse(null);
            keyPosition[i] = source.keyColumns().indexOf(columns.get(i).name());
        }
        this.binaryEncoders = Arrays.asList(binary).contains(null) ? null : binary;
        this.fillKeyPosition = new int[target.primaryKey().size()];
        for (int i = 0; i < fillKeyPosition.length; i++) {
            fillKeyPosition[i] = source.keyColumns().indexOf(target.primaryKey().get(i));
        }
        this.stagingName = stagingName;
        List<String> names = columns.stream().map(TargetColumn::name).toList();
        this.copyTarget = CopyLoader.copyStatement(Statements.qualified(target.id()), names, format);
        this.copyTargetBinary = CopyLoader.binaryCopyStatement(Statements.qualified(target.id()), names);
        if (appendOnly || history) {
            this.createStaging = "";
            this.copyStaging = "";
            this.copyStagingBinary = "";
            this.fill = "";
            this.unfilled = "";
            this.delete = "";
            this.insertFromStaging = "";
            this.merge = "";
            this.upsert = "";
            this.small = SmallBatchSql.NONE;
            this.mergeable = false;
        }
        else {
            List<String> stagedNames = new ArrayList<>();
            stagedNames.add(StagingColumns.INSERT);
            stagedNames.add(StagingColumns.UNAVAILABLE);
            for (int i = 0; i < target.primaryKey().size(); i++) {
                stagedNames.add(StagingColumns.fill(i));
            }
            stagedNames.addAll(names);
            this.createStaging = dialect.staging().createStagingTable(stagingName, columns, target);
            this.copyStaging = CopyLoader.copyStatement(SqlIdentifiers.quote(stagingName), stagedNames,
                    format);
            this.copyStagingBinary = CopyLoader.binaryCopyStatement(SqlIdentifiers.quote(stagingName),
                    stagedNames);
            this.fill = Statements.fillUnavailable(target, columns, stagingName);
            this.unfilled = Statements.unfilledRows(target, stagingName);
            this.insertFromStaging = Statements.insertFromStaging(target.id(), columns, stagingName);
            if (softDelete) {
                this.delete = SoftDeletes.deleteInsert(dialect, target, columns, metadataColumns, stagingName);
                this.merge = Statements.mergeFromStaging(target, columns, stagingName,
                        SoftDeletes.mergeDeleteAction(metadataColumns));
                this.upsert = SoftDeletes.markStagedDeletes(target, metadataColumns, stagingName) + "; "
                        + Statements.upsertFromStaging(target, columns, stagingName);
                this.small = SmallBatchSql.create(dialect, target, columns,
                        SoftDeletes.mergeDeleteAction(metadataColumns));
            }
            else {
                this.delete = dialect.delete().deleteTouchedKeys(target, stagingName);
                this.merge = Statements.mergeFromStaging(target, columns, stagingName);
                this.upsert = dialect.delete().deleteStagedDeletes(target, stagingName) + "; "
                        + Statements.upsertFromStaging(target, columns, stagingName);
                this.small = SmallBatchSql.create(dialect, target, columns, "DELETE");
            }
            this.mergeable = target.uniqueIndexes().isEmpty()
                    && columns.stream().noneMatch(column ->
                            column.identityAlways() && !target.primaryKey().contains(column.name()));
        }
    }

    /**
     * Whether {@link #upsert} may apply this table's rows: the user may update it, {@link #mergeable},
     * and not append-optimized ({@code ON CONFLICT} needs a heap table).
     */
    public boolean upsertable()
    {
        return mergeable && target.updatable() && !target.appendOptimized();
    }

    /**
     * Checks that rows of {@code source} can be applied to {@code target} and plans how.
     *
     * @throws SinkException {@link ErrorCode#SCHEMA_MISMATCH} naming the tables and columns that do not fit
     */
    public static TablePlan create(TableSchema source, TargetTable target, Dialect dialect, CopyFormat format,
            boolean appendOnlyWithoutKey, String stagingName)
    {
        return create(source, target, dialect, format, appendOnlyWithoutKey, stagingName, ChangeMetadata.NONE, false);
    }

    /**
     * As {@link #create(TableSchema, TargetTable, Dialect, CopyFormat, boolean, String)}, with the
     * metadata columns and, for a history table ({@code history}), no key to merge by.
     */
    static TablePlan create(TableSchema source, TargetTable target, Dialect dialect, CopyFormat format,
            boolean appendOnlyWithoutKey, String stagingName,
            ChangeMetadata metadata, boolean history)
    {
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        requireNonNull(metadata, "metadata is null");
        List<TargetColumn> columns = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (ColumnSchema column : source.columns()) {
            target.column(column.name()).ifPresentOrElse(columns::add, () -> missing.add(column.name()));
        }
        if (!missing.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table() + " to "
                    + target.id() + ": target has no column(s) " + missing
                    + " (target columns: " + target.columnNames() + "). Add them to the target table, or set "
                    + "schema.evolution=add-columns.");
        }
        List<TargetColumn> metadataColumns = MetadataColumns.resolve(metadata, source, target);
        if (history) {
            HistoryTables.checkTarget(source, target, metadata);
            return new TablePlan(source, target, false, columns, metadata, metadataColumns, true, stagingName, dialect,
                    format);
        }
        if (!source.hasKey()) {
            if (!appendOnlyWithoutKey) {
                throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table()
                        + ": the source table has no primary key, so changes cannot be merged by key."
                        + " Add a primary key, or set tables.without.key=append-only to copy its inserts straight into "
                        + target.id() + ".");
            }
            return new TablePlan(source, target, true, columns, metadata, metadataColumns, false, stagingName, dialect,
                    format);
        }
        Set<String> sourceKey = new HashSet<>(source.keyColumns());
        if (target.primaryKey().isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table() + " to "
                    + target.id() + ": the target table has no primary key;"
                    + " pgsink deletes and rewrites rows by key, so the target needs PRIMARY KEY ("
                    + String.join(", ", source.keyColumns()) + ").");
        }
        if (!sourceKey.equals(new HashSet<>(target.primaryKey()))) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table() + " to "
                    + target.id() + ": source key " + source.keyColumns()
                    + " differs from the target's primary key " + target.primaryKey()
                    + " (the source's primary key changed, or the target was made with another):"
                    + " rows are merged by the source key, which must be the target's. Change the target's primary key "
                    + "(ALTER TABLE " + target.id()
                    + " DROP CONSTRAINT ..., ADD PRIMARY KEY (" + source.keyColumns().stream()
                    .map(SqlIdentifiers::quote).collect(Collectors.joining(", ")) + ")) and restart.");
        }
        if (dialect.distribution().distributes() && !sourceKey.containsAll(target.distributionKey())) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table() + " to "
                    + target.id() + ": the Greenplum distribution key "
                    + target.distributionKey() + " is not part of the primary key " + target.primaryKey()
                    + ", so a key cannot be located on one segment. Distribute the table by (part of) "
                    + "its primary key.");
        }
        return new TablePlan(source, target, false, columns, metadata, metadataColumns, false, stagingName, dialect,
                format);
    }
}
