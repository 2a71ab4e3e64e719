package io.pgsink.merge;

import io.pgsink.core.change.SourceAttribute;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnSelection;
import io.pgsink.core.mapping.TableNameFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static java.util.Objects.requireNonNull;

/**
 * The {@link TablePlan} of each source table for the schema version last seen, and the target
 * tables they were made for, as the catalog described them ({@link TargetCatalog}). A new source
 * schema version reads the target again and is checked against the previous one
 * ({@link SchemaEvolution#typeChanges}); with {@code schema.evolution=add-columns}, missing
 * target tables are created and new columns added first, committed at once so that the data
 * transaction starts with the target as the plan expects it. A renamed source column
 * ({@link ColumnRenames}) is renamed in the target by the data transaction itself
 * ({@link #renameColumns}), so that the target never holds the new name with rows of the old
 * schema; until that transaction commits, the schema it planned is not taken as the table's last one
 * ({@link #committed}, {@link #rolledBack}).
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
final class TablePlans
{
    private static final Logger log = LoggerFactory.getLogger(TablePlans.class);

    private final String sinkName;
    private final TableNameFormat routing;
    private final CopyFormat format;
    private final boolean appendOnlyWithoutKey;
    private final boolean evolveSchema;
    private final boolean widenTypes;
    private final ChangeMetadata metadata;
    private final Set<String> metadataColumnNames;
    private final ColumnSelection columnSelection;
    private final StagingTables staging;
    private final Map<TableId, TargetTable> targets = new HashMap<>();
    private final Map<TableId, TablePlan> plans = new HashMap<>();
    private final SourceColumns sourceColumns;
    /** The last schema version of each source table that a committed transaction applied, for telling renames. */
    private final Map<TableId, ColumnRenames.Recorded> committed = new HashMap<>();
    /** Schema versions planned in the current transaction. */
    private final Map<TableId, ColumnRenames.Recorded> uncommitted = new HashMap<>();
    /** DDL the current transaction runs before its data: renames. */
    private final List<String> pending = new ArrayList<>();
    /** The unique indexes beyond the primary key last logged for each target table, so that the log says it once. */
    private final Map<TableId, List<String>> announcedUniqueIndexes = new HashMap<>();

    TablePlans(SinkConfig config, StagingTables staging)
    {
        this(config, staging, SourceColumns.UNKNOWN);
    }

    TablePlans(SinkConfig config, StagingTables staging, SourceColumns sourceColumns)
    {
        this.sourceColumns = requireNonNull(sourceColumns, "sourceColumns is null");
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.routing = config.tableNameFormat();
        this.format = config.copyFormat();
        this.appendOnlyWithoutKey = config.appendOnlyWithoutKey();
        this.evolveSchema = config.evolvesSchema();
        this.widenTypes = config.widensColumns();
        this.metadata = config.changeMetadata();
        this.columnSelection = config.columnSelection();
        this.metadataColumnNames = metadata.columns().stream().map(ChangeMetadata.Column::name)
                .collect(Collectors.toUnmodifiableSet());
        this.staging = requireNonNull(staging, "staging is null");
    }

    /** The target table of a source table. */
    TableId route(TableId source)
    {
        return routing.targetOf(source);
    }

    /** The plan {@link #plan} made for the source table's current schema. */
    TablePlan planned(TableId source)
    {
        TablePlan plan = plans.get(source);
        if (plan == null) {
            throw new IllegalStateException("No plan for " + source + ": its schema was not planned before its "
                    + "changes were applied");
        }
        return plan;
    }

    /** The plan for rows of {@code schema}: the one made before, or a new one when the schema is new. */
    TablePlan plan(Connection connection, Dialect dialect, TableSchema schema)
            throws SQLException
    {
        TablePlan previous = plans.get(schema.table());
        if (previous != null && (previous.source == schema || previous.source.equals(schema))) {
            return previous;
        }
        TableId targetId = route(schema.table());
        TargetTable target = targets.get(targetId);
        if (target == null || previous != null) {
            // a new source schema version: the target may have changed too
            target = readTarget(connection, dialect, targetId, schema);
        }
        List<String> alterations = SchemaEvolution.typeChanges(previous == null ? null : previous.source, schema,
                target, widenTypes);
        Optional<List<SourceAttribute>> catalog = Optional.empty();
        if (evolveSchema) {
            Map<String, String> renames = ColumnRenames.detect(recorded(schema.table()), schema, target, sourceColumns,
                    column -> metadataColumnNames.contains(column) || !columnSelection.writes(schema.table(), column));
            if (!renames.isEmpty()) {
                pending.addAll(ColumnRenames.statements(target, renames));
                log.info("{} - renaming column(s) of {} as on the source {} in the transaction that applies the "
                        + "new schema of {}", sinkName, targetId, renames, schema.table());
                target = ColumnRenames.renamed(target, renames);
            }
            catalog = sourceColumns.read(schema.table());
            List<String> additions =
                    new ArrayList<>(SchemaEvolution.addColumns(schema, target, byName(catalog),
                            () -> hasRows(connection, targetId)));
            additions.addAll(MetadataColumns.addColumns(metadata, target));
            additions.addAll(alterations);
            if (!additions.isEmpty()) {
                SchemaEvolution.execute(connection, additions);
                log.info("{} - added or widened column(s) of {} for the new schema of {}: {}", sinkName, targetId,
                        schema.table(), additions);
                target = readTarget(connection, dialect, targetId, schema);
                if (!renames.isEmpty()) {
                    // the catalog still shows the old names: the data transaction renames them
                    target = ColumnRenames.renamed(target, renames);
                }
            }
        }
        uncommitted.put(schema.table(), ColumnRenames.Recorded.of(schema, catalog));
        TablePlan plan = TablePlan.create(schema, target, dialect, format, appendOnlyWithoutKey,
                staging.newName(targetId), metadata, metadata.isHistory(schema.table()));
        plans.put(schema.table(), plan);
        if (!plan.appendOnly && !plan.history && !target.uniqueIndexes().isEmpty()
                && !target.uniqueIndexes().equals(announcedUniqueIndexes.put(targetId, target.uniqueIndexes()))) {
            log.info("{} - {} has unique index(es) {} beyond its primary key, which an update in place checks"
                    + " row by row: its changes are applied by deleting every touched key, then inserting"
                    + " the final rows (not MERGE or upsert), so that a source transaction that swaps unique values"
                    + " applies",
                    sinkName, targetId, target.uniqueIndexes());
        }
        return plan;
    }

    /** Runs the column renames the current transaction's plans expect, before it writes rows. */
    void renameColumns(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String sql : pending) {
                statement.execute(sql);
            }
        }
    }

    /** The current transaction committed: the schema versions it planned are the tables' last. */
    void committed()
    {
        committed.putAll(uncommitted);
        uncommitted.clear();
        pending.clear();
    }

    /** The current transaction did not commit: its tables are planned again, from the last committed versions. */
    void rolledBack()
    {
        for (TableId table : uncommitted.keySet()) {
            TablePlan plan = plans.remove(table);
            if (plan != null) {
                targets.remove(plan.target.id());
            }
        }
        uncommitted.clear();
        pending.clear();
    }

    /**
     * The target changed under the sink (a table or column it planned with is gone): read the catalog again next time.
     */
    void forget()
    {
        plans.clear();
        targets.clear();
    }

    /** The last committed version of the table, else the one the catalog showed at the start, else null. */
    private ColumnRenames.Recorded recorded(TableId table)
    {
        ColumnRenames.Recorded recorded = committed.get(table);
        return recorded != null ? recorded
                : sourceColumns.initial(table).map(ColumnRenames.Recorded::initial).orElse(null);
    }

    private static Map<String, SourceAttribute> byName(Optional<List<SourceAttribute>> catalog)
    {
        Map<String, SourceAttribute> byName = new HashMap<>();
        catalog.ifPresent(attributes -> attributes.stream().filter(attribute -> !attribute.dropped())
                .forEach(attribute -> byName.put(attribute.name(), attribute)));
        return byName;
    }

    private static boolean hasRows(Connection connection, TableId table)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT 1 FROM " + Statements.qualified(table) + " LIMIT 1")) {
            return rows.next();
        }
    }

    private TargetTable readTarget(Connection connection, Dialect dialect, TableId targetId, TableSchema schema)
            throws SQLException
    {
        Optional<TargetTable> found = TargetCatalog.read(connection, targetId, dialect);
        if (found.isEmpty() && evolveSchema) {
            SchemaEvolution.execute(connection,
                    SchemaEvolution.createTable(targetId, schema, dialect,
                            TargetCatalog.schemaExists(connection, targetId.schema()), metadata,
                    metadata.isHistory(schema.table())));
            log.info("{} - created target table {} for {}", sinkName, targetId, schema.table());
            found = TargetCatalog.read(connection, targetId, dialect);
        }
        TargetTable target = found.orElseThrow(() ->
                new SinkException(ErrorCode.SCHEMA_MISMATCH, "Target table " + targetId
                        + " does not exist (or the target user cannot see it)."
                + " Create it with the columns and primary key of " + schema.table()
                + ", or set schema.evolution=add-columns to have pgsink create it."));
        targets.put(targetId, target);
        return target;
    }
}
