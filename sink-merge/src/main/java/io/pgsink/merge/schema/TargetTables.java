package io.pgsink.merge.schema;

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
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetTable;
import org.jetbrains.annotations.Nullable;
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
 * The target table of each source table, made to exist and match a new source schema version
 * before the flush plans its rows: read from the catalog ({@link TargetCatalog}) and checked
 * against the previous version ({@link SchemaEvolution#typeChanges}); with
 * {@code schema.evolution=add-columns}, a missing target table is created and new columns added
 * first, committed at once so that the data transaction starts with the target as the plan
 * expects it. A renamed source column ({@link ColumnRenames}) is renamed in the target by the data
 * transaction itself ({@link #renameColumns}), so that the target never holds the new name with
 * rows of the old schema; until that transaction commits, the schema version it met is not taken as
 * the table's last one ({@link #committed}, {@link #rolledBack}).
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class TargetTables
{
    private static final Logger log = LoggerFactory.getLogger(TargetTables.class);

    private final String sinkName;
    private final TableNameFormat routing;
    private final boolean evolveSchema;
    private final boolean widenTypes;
    private final ChangeMetadata metadata;
    private final Set<String> metadataColumnNames;
    private final ColumnSelection columnSelection;
    private final SourceColumns sourceColumns;
    private final Map<TableId, TargetTable> targets = new HashMap<>();
    /** The last schema version of each source table that a committed transaction applied, for telling renames. */
    private final Map<TableId, ColumnRenames.Recorded> committed = new HashMap<>();
    /** Schema versions met in the current transaction. */
    private final Map<TableId, ColumnRenames.Recorded> uncommitted = new HashMap<>();
    /** DDL the current transaction runs before its data: renames. */
    private final List<String> pending = new ArrayList<>();

    public TargetTables(SinkConfig config, SourceColumns sourceColumns)
    {
        requireNonNull(config, "config is null");
        this.sourceColumns = requireNonNull(sourceColumns, "sourceColumns is null");
        this.sinkName = config.sinkName();
        this.routing = config.tableNameFormat();
        this.evolveSchema = config.evolvesSchema();
        this.widenTypes = config.widensColumns();
        this.metadata = config.changeMetadata();
        this.columnSelection = config.columnSelection();
        this.metadataColumnNames = metadata.columns().stream().map(ChangeMetadata.Column::name)
                .collect(Collectors.toUnmodifiableSet());
    }

    /**
     * The target table of {@code schema}'s source table, made to match {@code schema}, a version
     * the sink has not planned yet.
     *
     * @param previous the version planned before, null when none was
     */
    public TargetTable ensure(Connection connection, Dialect dialect, TableSchema schema,
            @Nullable TableSchema previous)
            throws SQLException
    {
        TableId targetId = routing.targetOf(schema.table());
        TargetTable target = targets.get(targetId);
        if (target == null || previous != null) {
            // a new source schema version: the target may have changed too
            target = read(connection, dialect, targetId, schema);
        }
        List<String> alterations = SchemaEvolution.typeChanges(previous, schema, target, widenTypes);
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
                target = read(connection, dialect, targetId, schema);
                if (!renames.isEmpty()) {
                    // the catalog still shows the old names: the data transaction renames them
                    target = ColumnRenames.renamed(target, renames);
                }
            }
        }
        uncommitted.put(schema.table(), ColumnRenames.Recorded.of(schema, catalog));
        return target;
    }

    /** Runs the column renames the current transaction's target tables expect, before it writes rows. */
    public void renameColumns(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String sql : pending) {
                statement.execute(sql);
            }
        }
    }

    /** The current transaction committed: the schema versions it met are the tables' last. */
    public void committed()
    {
        committed.putAll(uncommitted);
        uncommitted.clear();
        pending.clear();
    }

    /**
     * The current transaction did not commit: the target tables of the source tables it met are read
     * again.
     *
     * @return those source tables, whose plans are made again
     */
    public Set<TableId> rolledBack()
    {
        Set<TableId> sources = Set.copyOf(uncommitted.keySet());
        for (TableId source : sources) {
            targets.remove(routing.targetOf(source));
        }
        uncommitted.clear();
        pending.clear();
        return sources;
    }

    /**
     * The target changed under the sink (a table or column it planned with is gone): read the catalog again next time.
     */
    public void forget()
    {
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

    private TargetTable read(Connection connection, Dialect dialect, TableId targetId, TableSchema schema)
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
