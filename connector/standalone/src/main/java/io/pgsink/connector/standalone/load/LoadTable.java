package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnProjection;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * One source table's load, checked against its target table once: the columns both COPY statements
 * name, the format, and the chunks (ranges of heap pages, {@code ctid} ranges) it is split into.
 *
 * <p>Values travel as the source prints them and the target's input functions read them: the same
 * path a streamed value takes (Debezium's value, written as its PostgreSQL text into the target
 * column), so a column whose target type differs from the source's gets the value streaming would
 * give it, and a value the target type cannot take fails the chunk with the COPY line and column,
 * as it would fail a flush. Binary COPY needs identical types, else the table goes as text.
 */
record LoadTable(SourceTable source, TableId target, List<String> columns, List<String> targetColumns,
        LoadFormat format, List<String> chunkConditions)
{
    LoadTable
    {
        requireNonNull(source, "source is null");
        requireNonNull(target, "target is null");
        columns = List.copyOf(columns);
        targetColumns = List.copyOf(targetColumns);
        if (columns.size() != targetColumns.size()) {
            throw new IllegalArgumentException("columns " + columns + " and target columns " + targetColumns
                    + " differ in number");
        }
        requireNonNull(format, "format is null");
        if (format == LoadFormat.AUTO) {
            throw new IllegalArgumentException("a table's format is text or binary, not auto");
        }
        chunkConditions = List.copyOf(chunkConditions);
    }

    TableId id()
    {
        return source.schema().table();
    }

    int chunks()
    {
        return chunkConditions.size();
    }

    /**
     * @param projection the source table's columns the sink writes, under their target names ({@code column.*})
     * @param tidRanges whether the source scans {@code ctid} ranges (PostgreSQL 14+); without, a table is one chunk
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) naming every column that cannot be loaded
     */
    static LoadTable plan(SourceTable source, ColumnProjection projection, TargetTable target, LoadFormat requested,
            long chunkBytes, boolean tidRanges, boolean keylessAllowed)
    {
        TableId id = source.schema().table();
        if (!source.schema().hasKey() && !keylessAllowed) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH,
                    "Source table " + id + " has no primary key: set tables.without.key=append-only to copy it (and "
                    + "then apply only its inserts),"
                    + " or exclude it from the captured tables");
        }
        List<String> problems = new ArrayList<>();
        List<String> columns = new ArrayList<>();
        List<String> targetColumns = new ArrayList<>();
        boolean identical = true;
        List<ColumnSchema> written = projection.target().columns();
        for (int i = 0; i < written.size(); i++) {
            ColumnSchema column = written.get(i);
            Optional<TargetColumn> targetColumn = target.column(column.name());
            if (targetColumn.isEmpty()) {
                problems.add("column " + quote(column.name()) + " (" + column.typeName()
                        + ") is missing in the target");
                continue;
            }
            if (targetColumn.get().generated()) {
                problems.add("column " + quote(column.name()) + " is generated in the target");
                continue;
            }
            if (!column.typeName().equals(targetColumn.get().declaredType())) {
                identical = false;
            }
            columns.add(projection.sourceColumn(i));
            targetColumns.add(column.name());
        }
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH,
                    "Cannot load " + id + " into " + target.id() + ": " + String.join("; ", problems)
                    + ". Make the target column types match the source (or let schema.evolution=add-columns create "
                            + "the table), then restart.");
        }
        LoadFormat format = requested == LoadFormat.BINARY && !identical ? LoadFormat.TEXT : requested;
        return new LoadTable(source, target.id(), columns, targetColumns, format, chunkConditions(source.bytes(),
                chunkBytes, tidRanges));
    }

    /**
     * {@code ctid} conditions that split {@code bytes} of heap into chunks of {@code chunkBytes}; the last is
     * open-ended.
     */
    static List<String> chunkConditions(long bytes, long chunkBytes, boolean tidRanges)
    {
        long blockSize = 8192;
        long pages = (bytes + blockSize - 1) / blockSize;
        long chunkPages = Math.max(1, chunkBytes / blockSize);
        if (!tidRanges || pages <= chunkPages) {
            return List.of("");
        }
        long count = Math.min(10_000, (pages + chunkPages - 1) / chunkPages);
        chunkPages = (pages + count - 1) / count;
        List<String> conditions = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            long from = i * chunkPages;
            StringJoiner condition = new StringJoiner(" AND ", " WHERE ", "");
            if (i > 0) {
                condition.add("ctid >= '(" + from + ",0)'::tid");
            }
            if (i < count - 1) {
                condition.add("ctid < '(" + (from + chunkPages) + ",0)'::tid");
            }
            conditions.add(condition.toString());
        }
        return conditions;
    }

    /** {@code COPY (SELECT ...) TO STDOUT} of chunk {@code chunk}. */
    String copyOut(int chunk)
    {
        String condition = chunkConditions.get(chunk);
        String list = columnList(columns);
        TableId id = id();
        String table = quote(id.schema()) + "." + quote(id.table());
        if (condition.isEmpty() && !source.partitioned()) {
            return "COPY " + table + " (" + list + ") TO STDOUT" + format.option();
        }
        return "COPY (SELECT " + list + " FROM " + table + condition + ") TO STDOUT" + format.option();
    }

    /** {@code COPY target (...) FROM STDIN}. */
    String copyIn()
    {
        return "COPY " + quote(target.schema()) + "." + quote(target.table()) + " (" + columnList(targetColumns)
                + ") FROM STDIN" + format.option();
    }

    private static String columnList(List<String> columns)
    {
        StringJoiner list = new StringJoiner(", ");
        for (String column : columns) {
            list.add(quote(column));
        }
        return list.toString();
    }
}
