package io.pgsink.merge.plan;

import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.CopyFormat;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.change.TableId;
import io.pgsink.core.mapping.TableNameFormat;
import io.pgsink.core.change.TableSchema;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.TargetTable;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * The {@link TablePlan} of each source table for the schema version last seen, made for the target
 * table as it stands once that version met it ({@code TargetTables#ensure}): a plan is made once per
 * schema version, so that the rows of every flush only index its prepared arrays.
 *
 * <p>Not thread-safe: owned by the sink's thread.
 */
public final class TablePlans
{
    private static final Logger log = LoggerFactory.getLogger(TablePlans.class);

    private final String sinkName;
    private final TableNameFormat routing;
    private final CopyFormat format;
    private final boolean appendOnlyWithoutKey;
    private final ChangeMetadata metadata;
    /** Names a new staging table for a target table. */
    private final Function<TableId, String> stagingNames;
    private final Map<TableId, TablePlan> plans = new HashMap<>();
    /** The unique indexes beyond the primary key last logged for each target table, so that the log says it once. */
    private final Map<TableId, List<String>> announcedUniqueIndexes = new HashMap<>();

    public TablePlans(SinkConfig config, Function<TableId, String> stagingNames)
    {
        requireNonNull(config, "config is null");
        this.sinkName = config.sinkName();
        this.routing = config.tableNameFormat();
        this.format = config.copyFormat();
        this.appendOnlyWithoutKey = config.appendOnlyWithoutKey();
        this.metadata = config.changeMetadata();
        this.stagingNames = requireNonNull(stagingNames, "stagingNames is null");
    }

    /** The target table of a source table. */
    public TableId route(TableId source)
    {
        return routing.targetOf(source);
    }

    /** The plan {@link #plan} made for the source table's current schema. */
    public TablePlan planned(TableId source)
    {
        TablePlan plan = plans.get(source);
        if (plan == null) {
            throw new IllegalStateException("No plan for " + source + ": its schema was not planned before its "
                    + "changes were applied");
        }
        return plan;
    }

    /** The plan made before for rows of {@code schema}, or null when {@code schema} is a version not planned yet. */
    public @Nullable TablePlan current(TableSchema schema)
    {
        TablePlan previous = plans.get(schema.table());
        if (previous != null && (previous.source == schema || previous.source.equals(schema))) {
            return previous;
        }
        return null;
    }

    /** The schema version of the source table planned last, null when none was. */
    public @Nullable TableSchema lastPlanned(TableId source)
    {
        TablePlan previous = plans.get(source);
        return previous == null ? null : previous.source;
    }

    /** Plans the rows of {@code schema}, a new version, for {@code target} as it stands now. */
    public TablePlan plan(Dialect dialect, TableSchema schema, TargetTable target)
    {
        TableId targetId = target.id();
        TablePlan plan = TablePlan.create(schema, target, dialect, format, appendOnlyWithoutKey,
                stagingNames.apply(targetId), metadata, metadata.isHistory(schema.table()));
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

    /** The plans of {@code sources} are made again: the transaction that planned them did not commit. */
    public void forget(Collection<TableId> sources)
    {
        sources.forEach(plans::remove);
    }

    /** The target changed under the sink (a table or column it planned with is gone): plan every table again. */
    public void forget()
    {
        plans.clear();
    }
}
