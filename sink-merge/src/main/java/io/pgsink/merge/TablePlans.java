package io.pgsink.merge;

import io.pgsink.core.ChangeMetadata;
import io.pgsink.core.CopyFormat;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import io.pgsink.core.TableId;
import io.pgsink.core.TableNameFormat;
import io.pgsink.core.TableSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The {@link TablePlan} of each source table for the schema version last seen, and the target
 * tables they were made for, as the catalog described them ({@link TargetCatalog}). A new source
 * schema version reads the target again and is checked against the previous one
 * ({@link SchemaEvolution#checkTypeChanges}); with {@code schema.evolution=add-columns}, missing
 * target tables are created and new columns added first, committed at once so that the data
 * transaction starts with the target as the plan expects it.
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
    private final ChangeMetadata metadata;
    private final StagingTables staging;
    private final Map<TableId, TargetTable> targets = new HashMap<>();
    private final Map<TableId, TablePlan> plans = new HashMap<>();

    TablePlans(SinkConfig config, StagingTables staging)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.routing = config.tableNameFormat();
        this.format = config.copyFormat();
        this.appendOnlyWithoutKey = config.appendOnlyWithoutKey();
        this.evolveSchema = config.evolvesSchema();
        this.metadata = config.changeMetadata();
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
            throw new IllegalStateException("No plan for " + source + ": its schema was not planned before its changes were applied");
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
        if (previous != null) {
            SchemaEvolution.checkTypeChanges(previous.source, schema, target);
        }
        if (evolveSchema) {
            List<String> additions = new ArrayList<>(SchemaEvolution.addColumns(schema, target));
            additions.addAll(MetadataColumns.addColumns(metadata, target));
            if (!additions.isEmpty()) {
                SchemaEvolution.execute(connection, additions);
                log.info("{} - added column(s) to {} for the new schema of {}", sinkName, targetId, schema.table());
                target = readTarget(connection, dialect, targetId, schema);
            }
        }
        TablePlan plan = TablePlan.create(schema, target, dialect, format, appendOnlyWithoutKey, staging.newName(targetId), metadata, metadata.isHistory(schema.table()));
        plans.put(schema.table(), plan);
        return plan;
    }

    /** The target changed under the sink (a table or column it planned with is gone): read the catalog again next time. */
    void forget()
    {
        plans.clear();
        targets.clear();
    }

    private TargetTable readTarget(Connection connection, Dialect dialect, TableId targetId, TableSchema schema)
            throws SQLException
    {
        Optional<TargetTable> found = TargetCatalog.read(connection, targetId, dialect);
        if (found.isEmpty() && evolveSchema) {
            SchemaEvolution.execute(connection, SchemaEvolution.createTable(targetId, schema, dialect, TargetCatalog.schemaExists(connection, targetId.schema()), metadata,
                    metadata.isHistory(schema.table())));
            log.info("{} - created target table {} for {}", sinkName, targetId, schema.table());
            found = TargetCatalog.read(connection, targetId, dialect);
        }
        TargetTable target = found.orElseThrow(() -> new SinkException(ErrorCode.SCHEMA_MISMATCH, "Target table " + targetId + " does not exist (or the target user cannot see it)."
                + " Create it with the columns and primary key of " + schema.table() + ", or set schema.evolution=add-columns to have pgsink create it."));
        targets.put(targetId, target);
        return target;
    }
}
