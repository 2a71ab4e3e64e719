package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * What changed between two readings of the source's tables ({@link SourceTables}) for the captured
 * ones, which no change event says: pgoutput streams rows, not DDL. A table dropped, or renamed to a
 * name the table lists do not capture, is only worth a warning (its target table keeps its rows).
 * A captured table renamed to another captured name would have its changes written into another
 * target table than its rows: that stops the sink at the first change under the new name. A table
 * dropped and created again, and a partition attached to or detached from a table published via
 * its root, leave the target with rows the source no longer has, or without rows it has, and no
 * change event will ever fix that: they stop the sink. So does a replica identity that leaves key
 * columns out of the old rows of deletes, whenever it is seen, the first reading included.
 *
 * <p>At a start the reading compared with is the one stored in the target ({@link StoredReading}),
 * when there is one: a change made while pgsink was stopped is found as if it ran. A stop then
 * also says how to have pgsink forget the stored table once the target is corrected by hand, and
 * a rename whose target table was renamed too is followed without a stop.
 *
 * <p>Stateless; asks the {@link StoredReading} about the target only when it finds a rename.
 */
public final class TableChanges
{
    /** What to do about one change. */
    enum Kind
    {
        /** Log it; the target stays right. */
        WARNING,
        /** Stop at the first change of {@link Finding#table()}, before it is applied. */
        STOP_AT_FIRST_CHANGE,
        /** Stop now. */
        STOP,
        /**
         * Stop at a change under {@link Finding#table()}, the old name of a table renamed while pgsink
         * was stopped: such a change was made before the rename, and Debezium, which looks the table
         * up by that name, finds no key for it. Nothing else is held back.
         */
        STOP_AT_OLD_NAME,
    }

    /** One change, with the message that says what happened, to which target table, and what to do. */
    record Finding(Kind kind, TableId table, String message)
    {
        Finding
        {
            requireNonNull(kind, "kind is null");
            requireNonNull(table, "table is null");
            requireNonNull(message, "message is null");
        }
    }

    /** What the comparison asks of the target, where the reading is stored. */
    interface StoredReading
    {
        /** No reading is stored: nothing to forget, nothing to ask. */
        StoredReading NONE = new StoredReading()
        {
            @Override
            public boolean targetRenamed(TableId from, TableId to)
            {
                return false;
            }

            @Override
            public Optional<String> forgetStatement(TableId sourceTable)
            {
                return Optional.empty();
            }
        };

        /** Whether target table {@code from} is gone and {@code to} exists: the user renamed it. */
        boolean targetRenamed(TableId from, TableId to);

        /** The statement that makes pgsink forget what it stored of {@code sourceTable}, if it stores readings. */
        Optional<String> forgetStatement(TableId sourceTable);
    }

    private static final String WHILE_STREAMING = "while pgsink streamed";
    private static final String WHILE_STOPPED = "while pgsink was stopped (or before its last stop)";

    private final Predicate<TableId> captured;
    private final boolean viaRoot;
    private final UnaryOperator<TableId> routing;
    private final StoredReading stored;

    /** Without a stored reading: see the other constructor. */
    TableChanges(Predicate<TableId> captured, boolean viaRoot, UnaryOperator<TableId> routing)
    {
        this(captured, viaRoot, routing, StoredReading.NONE);
    }

    /**
     * @param captured whether a source table is captured
     * @param viaRoot whether partitions are published via their root ({@code publish.via.partition.root})
     * @param routing the target table of a source table
     * @param stored the target where the reading is stored
     */
    public TableChanges(Predicate<TableId> captured, boolean viaRoot, UnaryOperator<TableId> routing,
            StoredReading stored)
    {
        this.captured = requireNonNull(captured, "captured is null");
        this.viaRoot = viaRoot;
        this.routing = requireNonNull(routing, "routing is null");
        this.stored = requireNonNull(stored, "stored is null");
    }

    /**
     * What changed since the reading stored in the target, {@code stored}, at a start: the same
     * findings as between two readings while streaming, and what {@link #initial} finds.
     */
    List<Finding> sinceStored(SourceTables stored, SourceTables current)
    {
        List<Finding> findings = initial(current);
        findings.addAll(tableChanges(stored, current, WHILE_STOPPED));
        return findings;
    }

    /**
     * The tables of {@code reading} that are captured (by name, or as partitions of captured tables
     * published via their root): what is stored in the target, and compared with at the next start.
     */
    SourceTables captured(SourceTables reading)
    {
        Map<Long, SourceTables.Table> tables = new HashMap<>();
        for (SourceTables.Table table : reading.byOid().values()) {
            if (isCaptured(reading, table)) {
                tables.put(table.oid(), table);
            }
        }
        return new SourceTables(tables);
    }

    /** What stops the sink in the first reading: a replica identity that leaves the key out. */
    List<Finding> initial(SourceTables current)
    {
        List<Finding> findings = new ArrayList<>();
        for (SourceTables.Table table : current.byOid().values()) {
            if (table.identityWithoutKey() && isCaptured(current, table)) {
                findings.add(identityWithoutKey(table));
            }
        }
        return findings;
    }

    List<Finding> compare(SourceTables previous, SourceTables current)
    {
        List<Finding> findings = new ArrayList<>();
        for (SourceTables.Table table : current.byOid().values()) {
            SourceTables.Table before = previous.byOid().get(table.oid());
            if (table.identityWithoutKey() && (before == null || !before.identityWithoutKey()) && isCaptured(current,
                    table)) {
                findings.add(identityWithoutKey(table));
            }
        }
        findings.addAll(tableChanges(previous, current, WHILE_STREAMING));
        return findings;
    }

    /**
     * Tables dropped, re-created or renamed, and partitions attached or detached, between two readings; {@code when}
     * says when it happened.
     */
    private List<Finding> tableChanges(SourceTables previous, SourceTables current, String when)
    {
        List<Finding> findings = new ArrayList<>();
        for (SourceTables.Table before : previous.byOid().values()) {
            if (viaRoot && before.isPartition()) {
                // a partitioned partition (nested partitions): what is attached to or detached from it moves rows in or
                // out of its root's target table
                if (before.partitioned() && isCaptured(previous, before) && current.byOid().containsKey(before.oid())) {
                    findings.addAll(partitionChanges(previous, current, before, routing.apply(root(previous,
                            before).name()), when));
                }
                continue;
            }
            if (!captured.test(before.name())) {
                continue;
            }
            TableId target = routing.apply(before.name());
            SourceTables.Table after = current.byOid().get(before.oid());
            if (after == null) {
                Optional<SourceTables.Table> recreated = current.byName(before.name());
                if (recreated.isPresent()) {
                    findings.add(new Finding(Kind.STOP, before.name(),
                            "Source table " + before.name() + " was dropped and created again (oid " + before.oid()
                            + ", now "
                            + recreated.get().oid() + ") " + when + ": target table " + target
                                    + " holds rows of the dropped table, which no change event removes."
                            + " Load every table again (`pgsink reset --config FILE`, then `pgsink run`), or empty "
                                    + target + " and copy the new table's rows into it yourself"
                            + " (with source.publication.autocreate.mode=filtered, also add the new table to the "
                                    + "publication)" + forget(before.name()) + ", then start again."));
                }
                else {
                    findings.add(new Finding(Kind.WARNING, before.name(),
                            "source table " + before.name() + " was dropped: target table " + target
                            + " keeps its rows (pgsink drops no target table); drop it yourself if it should go too"));
                }
                continue;
            }
            if (!after.name().equals(before.name())) {
                TableId renamedTarget = routing.apply(after.name());
                if (when.equals(WHILE_STOPPED) && current.byName(before.name()).isEmpty()) {
                    findings.add(new Finding(Kind.STOP_AT_OLD_NAME, before.name(),
                            "Source table " + before.name() + " was renamed to " + after.name()
                            + " (the same table, oid "
                            + before.oid() + ") " + when
                                    + ", after changes pgsink had not streamed yet: they arrive under the old name, "
                                    + "which Debezium no longer finds in the"
                            + " source catalog, so they carry no key and cannot be applied. Load the table again "
                                    + "(`pgsink reset --config FILE`, then `pgsink run`); to avoid this,"
                            + " rename captured tables while pgsink runs."));
                }
                if (!captured.test(after.name())) {
                    findings.add(new Finding(Kind.WARNING, before.name(),
                            "source table " + before.name() + " was renamed to " + after.name()
                            + ", which the source table and schema lists do not capture: its changes are no longer "
                                    + "applied, and target table " + target
                            + " keeps its rows as of the rename. To go on capturing it, add the new name to "
                                    + "source.table.include.list"
                            + (renamedTarget.equals(target) ? "" : ", rename the target table to " + renamedTarget)
                                    + " and restart"));
                }
                else if (!renamedTarget.equals(target) && stored.targetRenamed(target, renamedTarget)) {
                    findings.add(new Finding(Kind.WARNING, after.name(),
                            "source table " + before.name() + " was renamed to " + after.name() + " and target table "
                            + target
                            + " to " + renamedTarget + ": its changes go on into " + renamedTarget));
                }
                else if (!renamedTarget.equals(target)) {
                    findings.add(new Finding(Kind.STOP_AT_FIRST_CHANGE, after.name(),
                            "Source table " + before.name() + " was renamed to " + after.name()
                            + " (the same table, oid "
                            + before.oid() + ") " + when + ": its rows are in target table " + target
                                    + ", and its changes would now go to " + renamedTarget
                            + ". Rename the target table (" + renameStatement(target,
                                    renamedTarget) + ") and start again."));
                }
            }
            if (viaRoot && before.partitioned()) {
                findings.addAll(partitionChanges(previous, current, before, target, when));
            }
        }
        return findings;
    }

    /**
     * Whether changes of {@code table} are captured: by its name, or, published via the root, as a partition of a
     * captured table.
     */
    private boolean isCaptured(SourceTables tables, SourceTables.Table table)
    {
        if (captured.test(table.name())) {
            return true;
        }
        SourceTables.Table parent = tables.byOid().get(table.parent());
        return viaRoot && parent != null && isCaptured(tables, parent);
    }

    /** The table {@code table} is a partition of at the top, or itself. */
    private static SourceTables.Table root(SourceTables tables, SourceTables.Table table)
    {
        SourceTables.Table root = table;
        SourceTables.Table parent = tables.byOid().get(root.parent());
        while (parent != null) {
            root = parent;
            parent = tables.byOid().get(root.parent());
        }
        return root;
    }

    /**
     * Debezium fills the key columns the old row of a delete or key change lacks with made-up values
     * (0, the empty string), so such a change would miss its target row, or hit another one.
     */
    private static Finding identityWithoutKey(SourceTables.Table table)
    {
        return new Finding(Kind.STOP, table.name(),
                "Source table " + table.name()
                + " has REPLICA IDENTITY USING INDEX of an index without (all) its primary key columns:"
                + " its deletes and key changes are streamed without the old key, which Debezium fills with made-up "
                        + "values (0, the empty string), so the target row they change"
                + " cannot be found, or another one is. Set REPLICA IDENTITY DEFAULT (or FULL) on the source (ALTER "
                        + "TABLE " + table.name() + " REPLICA IDENTITY DEFAULT),"
                + " then load the table again (`pgsink reset --config FILE`, then `pgsink run`): changes made since "
                        + "the identity changed are not reliable.");
    }

    private List<Finding> partitionChanges(SourceTables previous, SourceTables current, SourceTables.Table parent,
            TableId target, String when)
    {
        List<Finding> findings = new ArrayList<>();
        List<SourceTables.Table> before = previous.partitionsOf(parent.oid());
        List<SourceTables.Table> after = current.partitionsOf(parent.oid());
        Set<Long> beforeOids = before.stream().map(SourceTables.Table::oid).collect(Collectors.toSet());
        Set<Long> afterOids = after.stream().map(SourceTables.Table::oid).collect(Collectors.toSet());
        for (SourceTables.Table attached : after) {
            if (!beforeOids.contains(attached.oid())) {
                findings.add(new Finding(Kind.STOP, parent.name(),
                        "Partition " + attached.name() + " (" + attached.bound() + ") was attached to source table "
                        + parent.name()
                        + ", which is published via its root, " + when
                                + ": the rows it held before were not streamed (attaching a partition writes no "
                                + "change events),"
                        + " so target table " + target + " lacks them. Copy them into " + target
                                + " (e.g. the output of COPY (SELECT * FROM " + attached.name()
                        + ") TO STDOUT on the source)" + forget(parent.name())
                                + ", or load every table again (`pgsink reset --config FILE`), then start again."));
            }
        }
        for (SourceTables.Table detached : before) {
            if (!afterOids.contains(detached.oid())) {
                findings.add(new Finding(Kind.STOP, parent.name(),
                        "Partition " + detached.name() + " (" + detached.bound()
                        + ") was detached from (or dropped with) source table "
                        + parent.name() + ", which is published via its root, " + when + ": its rows left "
                                + parent.name() + " without change events,"
                        + " so target table " + target
                                + " still holds them. Delete the rows of that partition bound from " + target
                                + forget(parent.name())
                        + ", or load every table again (`pgsink reset --config FILE`), then start again."));
            }
        }
        return findings;
    }

    /**
     * Once the target is corrected by hand, the stored reading of {@code sourceTable} must go too, or the next start
     * finds the change again.
     */
    private String forget(TableId sourceTable)
    {
        return stored.forgetStatement(sourceTable).map(statement
                -> " and make pgsink forget the table as it stored it (" + statement + ")").orElse("");
    }

    private static String renameStatement(TableId from, TableId to)
    {
        if (from.schema().equals(to.schema())) {
            return "ALTER TABLE " + from + " RENAME TO " + quote(to.table());
        }
        return "ALTER TABLE " + from + " SET SCHEMA " + quote(to.schema()) + ", then RENAME TO " + quote(to.table());
    }
}
