package io.pgsink.merge.table;

import io.pgsink.core.change.TableId;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A target table as the catalog describes it.
 *
 * @param id schema and name
 * @param columns in attribute order
 * @param primaryKey primary-key column names in key order; empty when the table has none
 * @param distributionKey Greenplum distribution-key columns; empty on PostgreSQL or for randomly distributed tables
 * @param updatable whether the target user may UPDATE the table, which lets PostgreSQL 15+ apply
 *         a flush's changes to existing keys with one {@code MERGE} instead of a delete and an insert
 * @param appendOptimized whether it is a Greenplum append-optimized table (row or column oriented),
 *         which {@code INSERT ... ON CONFLICT} refuses
 * @param uniqueIndexes names of the unique indexes and exclusion constraints, other than the primary
 *         key, that rows with distinct keys can violate and that are checked row by row (not
 *         {@code DEFERRABLE}): partial and expression indexes too, but not those that contain every
 *         primary-key column. A statement that updates rows in place ({@code MERGE},
 *         {@code ON CONFLICT DO UPDATE}) checks them after each row, so a batch that swaps two
 *         values would fail on the first row (see {@code TablePlan#mergeable})
 */
public record TargetTable(TableId id, List<TargetColumn> columns, List<String> primaryKey, List<String> distributionKey,
        boolean updatable, boolean appendOptimized, List<String> uniqueIndexes)
{
    /** A table without unique indexes beyond its primary key. */
    public TargetTable(TableId id, List<TargetColumn> columns, List<String> primaryKey, List<String> distributionKey,
            boolean updatable, boolean appendOptimized)
    {
        this(id, columns, primaryKey, distributionKey, updatable, appendOptimized, List.of());
    }

    /** A heap table. */
    public TargetTable(TableId id, List<TargetColumn> columns, List<String> primaryKey, List<String> distributionKey,
            boolean updatable)
    {
        this(id, columns, primaryKey, distributionKey, updatable, false);
    }

    /** A table the user may not update: flushes delete and insert. */
    public TargetTable(TableId id, List<TargetColumn> columns, List<String> primaryKey, List<String> distributionKey)
    {
        this(id, columns, primaryKey, distributionKey, false);
    }

    public TargetTable
    {
        requireNonNull(id, "id is null");
        columns = List.copyOf(requireNonNull(columns, "columns is null"));
        primaryKey = List.copyOf(requireNonNull(primaryKey, "primaryKey is null"));
        distributionKey = List.copyOf(requireNonNull(distributionKey, "distributionKey is null"));
        uniqueIndexes = List.copyOf(requireNonNull(uniqueIndexes, "uniqueIndexes is null"));
    }

    public Optional<TargetColumn> column(String name)
    {
        for (TargetColumn column : columns) {
            if (column.name().equals(name)) {
                return Optional.of(column);
            }
        }
        return Optional.empty();
    }

    public List<String> columnNames()
    {
        return columns.stream().map(TargetColumn::name).toList();
    }
}
