package io.pgsink.core.mapping;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * Which source columns the sink writes and under which target names: {@code column.include.list}
 * or {@code column.exclude.list} ({@link ColumnPatterns}), then {@code column.rename}
 * ({@link ColumnRenames}). Applied to change events before they are buffered
 * ({@link ColumnSelectingSink}) and to the initial load, so that staging, TOAST fill, auto-create
 * and added columns all see only the selected columns, by their target names.
 *
 * <p>A key column is always written: excluding it (or leaving it out of an include list) is a
 * configuration error, as is renaming a column the table lacks or one that is not written, or
 * renaming onto a name another written column has. {@link #problems} finds them per table (the
 * Kafka Connect sink checks each table's first record); {@link #unmatched} finds entries that
 * match no column of any captured table (the standalone service checks the source catalog at start).
 *
 * <p>Immutable.
 */
public final class ColumnSelection
{
    /** The configuration keys of a selection; {@code SinkConfig} names them in its table. */
    public static final String INCLUDE_LIST_KEY = "column.include.list";
    public static final String EXCLUDE_LIST_KEY = "column.exclude.list";
    public static final String RENAME_KEY = "column.rename";

    public static final ColumnSelection NONE = new ColumnSelection(ColumnPatterns.NONE, ColumnPatterns.NONE,
            ColumnRenames.NONE);

    private final ColumnPatterns include;
    private final ColumnPatterns exclude;
    private final ColumnRenames renames;

    public ColumnSelection(ColumnPatterns include, ColumnPatterns exclude, ColumnRenames renames)
    {
        this.include = requireNonNull(include, "include is null");
        this.exclude = requireNonNull(exclude, "exclude is null");
        this.renames = requireNonNull(renames, "renames is null");
        if (!include.isEmpty() && !exclude.isEmpty()) {
            throw new IllegalArgumentException(INCLUDE_LIST_KEY + " and " + EXCLUDE_LIST_KEY
                    + " cannot both be set");
        }
    }

    /** Whether every column is written under its source name. */
    public boolean isEmpty()
    {
        return include.isEmpty() && exclude.isEmpty() && renames.isEmpty();
    }

    /** Whether column {@code column} of {@code table} is written (by the include or exclude list; renames aside). */
    public boolean writes(TableId table, String column)
    {
        if (!include.isEmpty()) {
            return include.matches(table, column);
        }
        return !exclude.matches(table, column);
    }

    /** The target name of a written column. */
    public String targetName(TableId table, String column)
    {
        return renames.newName(table, column).orElse(column);
    }

    /**
     * Every reason the selection does not fit {@code source}, each naming the key, the table and
     * the column; empty when it fits.
     */
    public List<ConfigProblem> problems(TableSchema source)
    {
        return problems(source.table(), source);
    }

    /**
     * {@link #problems(TableSchema)} with the entries matched against {@code table} rather than the
     * schema's own table (the Kafka Connect sink's events carry their target table). A schema of key
     * columns only (a tombstone's) is not checked for renames of its table's other columns.
     */
    public List<ConfigProblem> problems(TableId table, TableSchema source)
    {
        requireNonNull(table, "table is null");
        requireNonNull(source, "source is null");
        boolean keysOnly = source.columnCount() == source.keyColumnCount();
        List<ConfigProblem> problems = new ArrayList<>();
        for (String key : source.keyColumns()) {
            if (!writes(table, key)) {
                problems.add(include.isEmpty()
                        ? ConfigProblem.invalid(EXCLUDE_LIST_KEY, exclude.toString(), false,
                                "excludes key column " + key + " of " + table + "; key columns are always written (the "
                                + "sink merges by key)")
                        : ConfigProblem.invalid(INCLUDE_LIST_KEY, include.toString(), false,
                                "leaves out key column " + key + " of " + table
                                + "; key columns are always written (the sink merges by key): add it to the list"));
            }
        }
        Map<String, String> writtenBy = new HashMap<>();
        boolean anyWritten = false;
        for (ColumnSchema column : source.columns()) {
            if (writes(table, column.name())) {
                anyWritten = true;
                String target = targetName(table, column.name());
                String earlier = writtenBy.putIfAbsent(target, column.name());
                if (earlier != null) {
                    problems.add(ConfigProblem.invalid(RENAME_KEY, renames.toString(), false,
                            "columns " + earlier + " and " + column.name() + " of " + table
                            + " would both be written to target column " + target));
                }
            }
        }
        if (!anyWritten) {
            ConfigPatternsKey lists = listKey();
            problems.add(ConfigProblem.invalid(lists.key(), lists.patterns().toString(), false, "leaves no column of "
                    + table + " to write"));
        }
        for (ColumnRenames.Rename rename : renames.of(table)) {
            if (source.columnIndex(rename.column()).isEmpty()) {
                if (keysOnly) {
                    continue;
                }
                problems.add(ConfigProblem.invalid(RENAME_KEY, renames.toString(), false,
                        "renames column " + rename.column() + " that " + table + " does not have (columns: "
                        + source.columnNames() + ")"));
            }
            else if (!writes(table, rename.column())) {
                ConfigPatternsKey lists = listKey();
                problems.add(ConfigProblem.invalid(RENAME_KEY, renames.toString(), false,
                        "renames column " + rename.column() + " of " + table + ", which " + lists.key()
                        + " leaves out"));
            }
        }
        return problems;
    }

    /**
     * The projection of rows of {@code source} onto the written columns, renamed.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) listing every {@link #problems problem}
     */
    public ColumnProjection project(TableSchema source)
    {
        return project(source.table(), source);
    }

    /**
     * {@link #project(TableSchema)} with the entries matched against {@code table}, the source
     * table the rows come from, rather than the schema's own (routed) table.
     */
    public ColumnProjection project(TableId table, TableSchema source)
    {
        List<ConfigProblem> problems = problems(table, source);
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, ConfigProblem.describe("Invalid column selection for " + table
                    + (table.equals(source.table()) ? "" : " (written to " + source.table() + ")"), problems));
        }
        List<ColumnSchema> columns = new ArrayList<>();
        List<Integer> indexes = new ArrayList<>();
        for (int i = 0; i < source.columnCount(); i++) {
            ColumnSchema column = source.columns().get(i);
            if (writes(table, column.name())) {
                indexes.add(i);
                columns.add(new ColumnSchema(targetName(table, column.name()), column.typeName(), column.optional(),
                        column.defaultValue()));
            }
        }
        List<String> key = source.keyColumns().stream().map(name -> targetName(table, name)).toList();
        return new ColumnProjection(source, new TableSchema(source.table(), columns, key),
                indexes.stream().mapToInt(Integer::intValue).toArray());
    }

    /**
     * Entries of the lists and the rename map that match no column of {@code sources} (the captured
     * tables): likely mistyped. The problems of each table ({@link #problems}) are added too.
     */
    public List<ConfigProblem> problems(List<TableSchema> sources)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        Set<Integer> matchedPatterns = new HashSet<>();
        ConfigPatternsKey lists = listKey();
        for (TableSchema source : sources) {
            problems.addAll(problems(source));
            for (String column : source.columnNames()) {
                int entry = lists.patterns().matchingEntry(source.table(), column);
                if (entry >= 0) {
                    matchedPatterns.add(entry);
                }
            }
        }
        List<String> entries = lists.patterns().entries();
        for (int i = 0; i < entries.size(); i++) {
            if (!matchedPatterns.contains(i)) {
                problems.add(ConfigProblem.invalid(lists.key(), lists.patterns().toString(), false,
                        "entry '" + entries.get(i) + "' matches no column of a captured table (entries are regular "
                        + "expressions matched whole against schema.table.column, ignoring case)"));
            }
        }
        // a rename of a missing column of a captured table is among that table's problems
        for (ColumnRenames.Rename rename : renames.entries()) {
            if (sources.stream().noneMatch(source -> source.table().equals(rename.table()))) {
                problems.add(ConfigProblem.invalid(RENAME_KEY, renames.toString(), false,
                        "entry '" + rename + "' names table " + rename.table()
                        + ", which is not captured (names are exact and case-sensitive)"));
            }
        }
        return problems;
    }

    private ConfigPatternsKey listKey()
    {
        return include.isEmpty() ? new ConfigPatternsKey(EXCLUDE_LIST_KEY, exclude)
                : new ConfigPatternsKey(INCLUDE_LIST_KEY, include);
    }

    /** The list in effect and its key. */
    private record ConfigPatternsKey(String key, ColumnPatterns patterns) {}

    @Override
    public String toString()
    {
        return "include=[" + include + "] exclude=[" + exclude + "] rename=[" + renames + "]";
    }
}
