package io.pgsink.core.change;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;

import static java.util.Objects.requireNonNull;

/**
 * The shape of a source table's row images: the columns in the order of the value arrays, and the
 * primary-key columns. Adapters cache one instance per table and schema version, so that events of
 * the same version share it and comparing versions is usually an identity check.
 */
public final class TableSchema
{
    private final TableId table;
    private final List<ColumnSchema> columns;
    private final List<String> keyColumns;
    private final int[] keyIndexes;
    private final Map<String, Integer> indexByName;

    public TableSchema(TableId table, List<ColumnSchema> columns, List<String> keyColumns)
    {
        this.table = requireNonNull(table, "table is null");
        this.columns = List.copyOf(requireNonNull(columns, "columns is null"));
        this.keyColumns = List.copyOf(requireNonNull(keyColumns, "keyColumns is null"));
        this.indexByName = new HashMap<>();
        for (int i = 0; i < this.columns.size(); i++) {
            if (indexByName.put(this.columns.get(i).name(), i) != null) {
                throw new IllegalArgumentException("Duplicate column " + this.columns.get(i).name() + " in " + table);
            }
        }
        this.keyIndexes = new int[this.keyColumns.size()];
        for (int i = 0; i < keyIndexes.length; i++) {
            Integer index = indexByName.get(this.keyColumns.get(i));
            if (index == null) {
                throw new IllegalArgumentException("Key column " + this.keyColumns.get(i) + " is not a column of "
                        + table + " " + columnNames());
            }
            keyIndexes[i] = index;
        }
    }

    public static TableSchema of(TableId table, List<String> columnNames, List<String> keyColumns)
    {
        return new TableSchema(table, columnNames.stream().map(ColumnSchema::of).toList(), keyColumns);
    }

    public TableId table()
    {
        return table;
    }

    public List<ColumnSchema> columns()
    {
        return columns;
    }

    public int columnCount()
    {
        return columns.size();
    }

    public List<String> columnNames()
    {
        return columns.stream().map(ColumnSchema::name).toList();
    }

    /** The primary-key columns in key order; empty for a table without a key. */
    public List<String> keyColumns()
    {
        return keyColumns;
    }

    public boolean hasKey()
    {
        return keyIndexes.length > 0;
    }

    public int keyColumnCount()
    {
        return keyIndexes.length;
    }

    /** Position in the value array of the {@code keyPosition}-th key column. */
    public int keyIndex(int keyPosition)
    {
        return keyIndexes[keyPosition];
    }

    public OptionalInt columnIndex(String name)
    {
        Integer index = indexByName.get(name);
        return index == null ? OptionalInt.empty() : OptionalInt.of(index);
    }

    /** Extracts the key of a row image of this schema. */
    public RowKey keyOf(Object[] values)
    {
        if (values.length != columns.size()) {
            throw new IllegalArgumentException("Row of " + table + " has " + values.length + " values, schema has "
                    + columns.size() + " columns");
        }
        Object[] key = new Object[keyIndexes.length];
        for (int i = 0; i < keyIndexes.length; i++) {
            key[i] = values[keyIndexes[i]];
        }
        return new RowKey(key);
    }

    @Override
    public boolean equals(Object o)
    {
        if (this == o) {
            return true;
        }
        if (!(o instanceof TableSchema that)) {
            return false;
        }
        return table.equals(that.table) && columns.equals(that.columns) && keyColumns.equals(that.keyColumns);
    }

    @Override
    public int hashCode()
    {
        return Objects.hash(table, columns, keyColumns);
    }

    @Override
    public String toString()
    {
        return table + " " + columnNames() + " key " + keyColumns;
    }
}
