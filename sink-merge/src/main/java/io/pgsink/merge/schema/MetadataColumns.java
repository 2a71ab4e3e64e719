package io.pgsink.merge.schema;

import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * The metadata columns ({@code metadata.*.column}, {@code delete.flag.column},
 * {@code delete.timestamp.column}) of a target table: their definitions for a table the sink
 * creates, the columns {@code schema.evolution=add-columns} adds, and the check of an existing
 * table, which must have each of them with a type its values fit.
 */
public final class MetadataColumns
{
    private static final Set<String> TEXT_TYPES = Set.of("text", "varchar", "bpchar", "citext");

    private MetadataColumns() {}

    /** Column definitions for {@code CREATE TABLE}. */
    static List<String> definitions(ChangeMetadata metadata)
    {
        List<String> definitions = new ArrayList<>();
        for (ChangeMetadata.Column column : metadata.columns()) {
            definitions.add(quote(column.name()) + " " + declaration(column.kind()));
        }
        return definitions;
    }

    /** {@code ALTER TABLE ... ADD COLUMN} for each metadata column the target lacks. */
    public static List<String> addColumns(ChangeMetadata metadata, TargetTable target)
    {
        List<String> statements = new ArrayList<>();
        for (ChangeMetadata.Column column : metadata.columns()) {
            if (target.column(column.name()).isEmpty()) {
                statements.add("ALTER TABLE " + Statements.qualified(target.id()) + " ADD COLUMN "
                        + quote(column.name()) + " " + declaration(column.kind()));
            }
        }
        return statements;
    }

    /**
     * The deleted flag defaults to false, so that rows written before it existed (or by the initial load) read as not
     * deleted.
     */
    private static String declaration(ChangeMetadata.Kind kind)
    {
        return kind == ChangeMetadata.Kind.DELETED_FLAG ? kind.typeName() + " NOT NULL DEFAULT false" : kind.typeName();
    }

    /**
     * The target's metadata columns, in {@link ChangeMetadata#columns()} order.
     *
     * @throws SinkException {@link ErrorCode#SCHEMA_MISMATCH} naming the table and every column that is
     *         missing, has a type its values do not fit, or is also a source column
     */
    public static List<TargetColumn> resolve(ChangeMetadata metadata, TableSchema source, TargetTable target)
    {
        List<TargetColumn> columns = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (ChangeMetadata.Column column : metadata.columns()) {
            if (source.columnIndex(column.name()).isPresent()) {
                problems.add("metadata column " + column.name() + " is also a column of the source table; name the "
                        + "metadata column differently");
                continue;
            }
            TargetColumn targetColumn = target.column(column.name()).orElse(null);
            if (targetColumn == null) {
                problems.add("has no metadata column " + column.name() + " (" + column.kind().typeName() + ")");
                continue;
            }
            if (!fits(column.kind(), targetColumn.encodingType())) {
                problems.add("metadata column " + column.name() + " is " + targetColumn.declaredType() + ", not "
                        + column.kind().typeName());
                continue;
            }
            columns.add(targetColumn);
        }
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot apply changes of " + source.table() + " to "
                    + target.id() + ": the target " + String.join("; ", problems)
                    + ". Add the column(s) to the target table (ALTER TABLE " + target.id()
                    + " ADD COLUMN ...), or set schema.evolution=add-columns to have pgsink add them.");
        }
        return columns;
    }

    private static boolean fits(ChangeMetadata.Kind kind, String encodingType)
    {
        return switch (kind) {
            case OPERATION, SOURCE_POSITION -> TEXT_TYPES.contains(encodingType);
            case SOURCE_TIMESTAMP, APPLIED_TIMESTAMP, DELETED_TIMESTAMP -> encodingType.equals("timestamptz");
            case DELETED_FLAG -> encodingType.equals("bool");
        };
    }
}
