package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.load.SourceCatalog;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnProjection;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.LoadTargets;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.verify.ComparedSide;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Which tables {@code pgsink verify} compares, found the way the service finds them: the captured
 * source tables ({@code source.table.include.list} and the other lists, read as Debezium reads
 * them, partitioned roots with {@code publish.via.partition.root}), each routed to its target table
 * ({@code target.table.name.format}), with the columns the sink writes, renamed
 * ({@code column.*}); metadata columns are not compared, and with {@code delete.mode=soft} the
 * target's soft-deleted rows count as absent. History tables and tables without a primary key
 * cannot be compared key by key, and a target table or column that is missing cannot be compared
 * at all: those are configuration problems, all named at once.
 */
final class VerifyPlanner
{
    private VerifyPlanner() {}

    static List<TablePair> plan(Connection source, Connection target, LoadSettings settings)
            throws SQLException
    {
        SinkConfig sink = settings.sink();
        Dialect dialect = LoadTargets.dialect(target, sink.targetDialect());
        ChangeMetadata metadata = sink.changeMetadata();
        List<String> problems = new ArrayList<>();
        List<TablePair> pairs = new ArrayList<>();
        for (TableSchema schema : SourceCatalog.schemas(source, settings.captured())) {
            TableId id = schema.table();
            if (metadata.isHistory(id)) {
                problems.add(id
                        + " is a history table (table.mode, history.table.include.list): it holds a row per change,"
                        + " not per key, so verify cannot compare it");
                continue;
            }
            if (!schema.hasKey()) {
                problems.add(id
                        + " has no primary key: verify compares rows by key; exclude it from the captured tables"
                        + " or give it a primary key");
                continue;
            }
            ColumnProjection projection = sink.columnSelection().project(schema);
            TableId targetId = settings.routing().apply(id);
            Optional<TargetTable> targetTable = LoadTargets.read(target, dialect, targetId);
            if (targetTable.isEmpty()) {
                problems.add(id + ": its target table " + targetId
                        + " does not exist (or the target user cannot see it)");
                continue;
            }
            plan(schema, projection, targetTable.get(), metadata, problems).ifPresent(pairs::add);
        }
        target.commit();
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, "Cannot verify: " + String.join("; ", problems));
        }
        return pairs;
    }

    private static Optional<TablePair> plan(TableSchema schema, ColumnProjection projection, TargetTable target,
            ChangeMetadata metadata,
            List<String> problems)
    {
        TableSchema written = projection.target();
        List<String> sourceValues = new ArrayList<>();
        List<String> targetValues = new ArrayList<>();
        int before = problems.size();
        for (int i = 0; i < written.columnCount(); i++) {
            ColumnSchema column = written.columns().get(i);
            Optional<TargetColumn> targetColumn = target.column(column.name());
            if (targetColumn.isEmpty()) {
                problems.add(schema.table() + ": column " + quote(column.name()) + " is missing in its target table "
                        + target.id());
                continue;
            }
            String sourceColumn = projection.sourceColumn(i);
            String targetType = targetColumn.get().declaredType();
            // a target column of another type holds the source's text as read by the target type
            sourceValues.add(column.typeName().equals(targetType)
                    ? ComparedSide.text(sourceColumn)
                    : ComparedSide.textAs(sourceColumn, targetType));
            targetValues.add(ComparedSide.text(column.name()));
        }
        List<String> sourceKeyTypes = new ArrayList<>();
        List<String> targetKeyTypes = new ArrayList<>();
        for (int i = 0; i < schema.keyColumnCount(); i++) {
            sourceKeyTypes.add(schema.columns().get(schema.keyIndex(i)).typeName());
            String targetKey = written.keyColumns().get(i);
            target.column(targetKey).ifPresent(column -> targetKeyTypes.add(column.declaredType()));
        }
        if (problems.size() > before) {
            return Optional.empty();
        }
        ComparedSide sourceSide = new ComparedSide(schema.table(), schema.keyColumns(), sourceKeyTypes,
                sourceValues, "");
        ComparedSide targetSide = new ComparedSide(target.id(), written.keyColumns(), targetKeyTypes, targetValues,
                visibleRows(metadata));
        return Optional.of(new TablePair(sourceSide, targetSide, written.keyColumns(), schema));
    }

    /** With soft deletes, the target rows not marked deleted. */
    private static String visibleRows(ChangeMetadata metadata)
    {
        if (!metadata.softDeletes()) {
            return "";
        }
        String timestamp = "";
        for (ChangeMetadata.Column column : metadata.columns()) {
            switch (column.kind()) {
                case DELETED_FLAG -> {
                    return "NOT coalesce(" + quote(column.name()) + ", false)";
                }
                case DELETED_TIMESTAMP -> timestamp = quote(column.name()) + " IS NULL";
                case OPERATION, SOURCE_TIMESTAMP, SOURCE_POSITION, APPLIED_TIMESTAMP -> {
                }
            }
        }
        return timestamp;
    }
}
