package io.pgsink.core.config;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigValues;
import io.pgsink.core.mapping.TablePatterns;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What the sink writes besides the source's columns, and how it writes deletes and histories: the
 * metadata columns ({@code metadata.*.column}), {@code delete.mode} with its columns, and which
 * tables are history tables ({@code table.mode}, {@code history.table.include.list}). Read once
 * from the configuration, with every combination that cannot work reported as a problem.
 */
public final class ChangeMetadata
{
    /** What a metadata column holds. */
    public enum Kind
    {
        /** The operation of the row's last change: {@code c}, {@code r}, {@code u} or {@code d}. */
        OPERATION("text"),
        /** When the row's last change was committed on the source. */
        SOURCE_TIMESTAMP("timestamptz"),
        /**
         * Where the row's last change is in the source stream, as text (see docs/concepts/history-and-soft-deletes.md).
         */
        SOURCE_POSITION("text"),
        /** When the sink applied the row: one time per flush transaction. */
        APPLIED_TIMESTAMP("timestamptz"),
        /**
         * Whether the row was deleted ({@code delete.mode=soft}; in history tables, whether the change is a delete).
         */
        DELETED_FLAG("boolean"),
        /** When the row was deleted at the source; NULL while it is not. */
        DELETED_TIMESTAMP("timestamptz");

        private final String typeName;

        Kind(String typeName)
        {
            this.typeName = typeName;
        }

        /**
         * The type the sink gives the column when it creates it; also the type it requires of an existing one (its
         * {@code pg_type.typname}, except text, which any string type may stand for).
         */
        public String typeName()
        {
            return typeName;
        }
    }

    /** One configured metadata column. */
    public record Column(Kind kind, String name)
    {
        public Column
        {
            requireNonNull(kind, "kind is null");
            requireNonNull(name, "name is null");
        }
    }

    public static final ChangeMetadata NONE = new ChangeMetadata(List.of(), DeleteMode.HARD, TableMode.MERGE,
            TablePatterns.NONE);

    private static final Map<Kind, ConfigKey<String>> COLUMN_KEYS = columnKeys();

    private final List<Column> columns;
    private final DeleteMode deleteMode;
    private final TableMode tableMode;
    private final TablePatterns historyTables;

    private ChangeMetadata(List<Column> columns, DeleteMode deleteMode, TableMode tableMode,
            TablePatterns historyTables)
    {
        this.columns = List.copyOf(columns);
        this.deleteMode = requireNonNull(deleteMode, "deleteMode is null");
        this.tableMode = requireNonNull(tableMode, "tableMode is null");
        this.historyTables = requireNonNull(historyTables, "historyTables is null");
    }

    private static Map<Kind, ConfigKey<String>> columnKeys()
    {
        Map<Kind, ConfigKey<String>> keys = new LinkedHashMap<>();
        keys.put(Kind.OPERATION, SinkKeys.METADATA_OPERATION_COLUMN);
        keys.put(Kind.SOURCE_TIMESTAMP, SinkKeys.METADATA_SOURCE_TIMESTAMP_COLUMN);
        keys.put(Kind.SOURCE_POSITION, SinkKeys.METADATA_SOURCE_POSITION_COLUMN);
        keys.put(Kind.APPLIED_TIMESTAMP, SinkKeys.METADATA_APPLIED_TIMESTAMP_COLUMN);
        keys.put(Kind.DELETED_FLAG, SinkKeys.DELETE_FLAG_COLUMN);
        keys.put(Kind.DELETED_TIMESTAMP, SinkKeys.DELETE_TIMESTAMP_COLUMN);
        return keys;
    }

    /**
     * The settings of {@code values}, or empty after adding every problem (of these keys alone or together) to
     * {@code problems}.
     */
    static Optional<ChangeMetadata> read(ConfigValues values, List<ConfigProblem> problems)
    {
        List<ConfigKey<?>> keys = new ArrayList<>(COLUMN_KEYS.values());
        keys.addAll(List.of(SinkKeys.DELETE_MODE, SinkKeys.TABLE_MODE, SinkKeys.HISTORY_TABLE_INCLUDE_LIST));
        for (ConfigKey<?> key : keys) {
            if (!values.isValid(key)) {
                return Optional.empty();
            }
        }
        int before = problems.size();
        List<Column> columns = new ArrayList<>();
        Map<String, ConfigKey<String>> byName = new HashMap<>();
        COLUMN_KEYS.forEach((kind, key) -> {
            String name = values.get(key);
            if (name.isEmpty()) {
                return;
            }
            ConfigKey<String> other = byName.putIfAbsent(name, key);
            if (other != null) {
                problems.add(combination(values, List.of(other, key),
                        "two metadata columns cannot have the same name"));
            }
            columns.add(new Column(kind, name));
        });
        DeleteMode deleteMode = values.get(SinkKeys.DELETE_MODE);
        boolean deleteColumns = !values.get(SinkKeys.DELETE_FLAG_COLUMN).isEmpty()
                || !values.get(SinkKeys.DELETE_TIMESTAMP_COLUMN).isEmpty();
        List<ConfigKey<?>> deleteKeys = List.of(SinkKeys.DELETE_MODE, SinkKeys.DELETE_FLAG_COLUMN,
                SinkKeys.DELETE_TIMESTAMP_COLUMN);
        switch (deleteMode) {
            case HARD -> {
                if (deleteColumns) {
                    problems.add(combination(values, deleteKeys, "the deleted flag and timestamp columns are only "
                            + "written with delete.mode=soft"));
                }
            }
            case SOFT -> {
                if (!deleteColumns) {
                    problems.add(combination(values, deleteKeys,
                            "delete.mode=soft marks deleted rows in delete.flag.column and/or delete.timestamp.column; "
                            + "name at least one"));
                }
            }
        }
        TableMode tableMode = values.get(SinkKeys.TABLE_MODE);
        TablePatterns historyTables = values.get(SinkKeys.HISTORY_TABLE_INCLUDE_LIST);
        if (tableMode == TableMode.HISTORY && !historyTables.isEmpty()) {
            problems.add(combination(values, List.of(SinkKeys.TABLE_MODE, SinkKeys.HISTORY_TABLE_INCLUDE_LIST),
                    "table.mode=history makes every table a history table already; list tables in "
                    + "history.table.include.list only with table.mode=merge"));
        }
        boolean history = tableMode == TableMode.HISTORY || !historyTables.isEmpty();
        if (history && (values.get(SinkKeys.METADATA_OPERATION_COLUMN).isEmpty()
                || values.get(SinkKeys.METADATA_SOURCE_POSITION_COLUMN).isEmpty())) {
            problems.add(combination(values,
                    List.of(SinkKeys.TABLE_MODE, SinkKeys.HISTORY_TABLE_INCLUDE_LIST,
                            SinkKeys.METADATA_OPERATION_COLUMN, SinkKeys.METADATA_SOURCE_POSITION_COLUMN),
                    "history tables need metadata.operation.column and metadata.source.position.column, which tell "
                    + "their rows apart and order them"));
        }
        if (problems.size() > before) {
            return Optional.empty();
        }
        return Optional.of(new ChangeMetadata(columns, deleteMode, tableMode, historyTables));
    }

    private static ConfigProblem combination(ConfigValues values, List<? extends ConfigKey<?>> keys, String reason)
    {
        Map<String, String> shown = new LinkedHashMap<>();
        for (ConfigKey<?> key : keys) {
            shown.put(key.name(), key.shown(values.text(key)));
        }
        return ConfigProblem.combination("change metadata", shown, reason);
    }

    /** The key that names the metadata column of {@code kind} ({@code metadata.operation.column}, ...). */
    public static ConfigKey<String> key(Kind kind)
    {
        return COLUMN_KEYS.get(requireNonNull(kind, "kind is null"));
    }

    /**
     * The configured metadata columns, in a fixed order: operation, source timestamp, source position, applied
     * timestamp, deleted flag, deleted timestamp.
     */
    public List<Column> columns()
    {
        return columns;
    }

    public DeleteMode deleteMode()
    {
        return deleteMode;
    }

    /** {@code delete.mode=soft}. */
    public boolean softDeletes()
    {
        return switch (deleteMode) {
            case HARD -> false;
            case SOFT -> true;
        };
    }

    /**
     * Whether changes of {@code table} (the source table; in Kafka Connect, the table its records are routed to) are
     * appended rather than merged.
     */
    public boolean isHistory(TableId table)
    {
        return switch (tableMode) {
            case MERGE -> historyTables.matches(table);
            case HISTORY -> true;
        };
    }
}
