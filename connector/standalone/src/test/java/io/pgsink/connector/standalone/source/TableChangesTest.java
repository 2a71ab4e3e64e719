package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** What {@link TableChanges} makes of two readings of the source's tables, without a database. */
class TableChangesTest
{
    private static final TableChanges BY_NAME = new TableChanges(table -> table.table().startsWith("t_"), true, table -> TableId.of("target", table.table()));

    private static SourceTables tables(SourceTables.Table... tables)
    {
        return new SourceTables(Arrays.stream(tables).collect(Collectors.toMap(SourceTables.Table::oid, Function.identity())));
    }

    private static SourceTables.Table table(long oid, String name)
    {
        return new SourceTables.Table(oid, TableId.of("public", name), false, 0, null, false);
    }

    private static List<TableChanges.Kind> kinds(List<TableChanges.Finding> findings)
    {
        return findings.stream().map(TableChanges.Finding::kind).toList();
    }

    @Test
    void nothingChangedFindsNothing()
    {
        SourceTables reading = tables(table(1, "t_a"), table(2, "other"));
        assertThat(BY_NAME.compare(reading, reading)).isEmpty();
        assertThat(BY_NAME.initial(reading)).isEmpty();
    }

    @Test
    void dropsAndRenamesOutOfTheListsWarn()
    {
        List<TableChanges.Finding> findings = BY_NAME.compare(tables(table(1, "t_a"), table(2, "t_b")), tables(table(2, "gone_b")));
        assertThat(kinds(findings)).containsExactlyInAnyOrder(TableChanges.Kind.WARNING, TableChanges.Kind.WARNING);
    }

    @Test
    void aRenameToACapturedNameStopsAtItsFirstChangeUnlessBothNamesShareATarget()
    {
        List<TableChanges.Finding> findings = BY_NAME.compare(tables(table(1, "t_a")), tables(table(1, "t_b")));
        assertThat(findings).singleElement().satisfies(finding -> {
            assertThat(finding.kind()).isEqualTo(TableChanges.Kind.STOP_AT_FIRST_CHANGE);
            assertThat(finding.table()).isEqualTo(TableId.of("public", "t_b"));
            assertThat(finding.message()).contains("Rename the target table (ALTER TABLE \"target\".\"t_a\" RENAME TO \"t_b\")");
        });
        TableChanges oneTarget = new TableChanges(table -> true, true, table -> TableId.of("target", "all"));
        assertThat(oneTarget.compare(tables(table(1, "t_a")), tables(table(1, "t_b")))).isEmpty();
    }

    @Test
    void aTableCreatedAgainStops()
    {
        assertThat(kinds(BY_NAME.compare(tables(table(1, "t_a")), tables(table(5, "t_a"))))).containsExactly(TableChanges.Kind.STOP);
    }

    @Test
    void partitionsOfARootPublishedTableStopOnlyWhenPublishedViaTheRoot()
    {
        SourceTables.Table parent = new SourceTables.Table(1, TableId.of("public", "t_p"), true, 0, null, false);
        SourceTables.Table east = new SourceTables.Table(2, TableId.of("public", "p_east"), false, 1, "FOR VALUES IN ('east')", false);
        SourceTables.Table west = new SourceTables.Table(3, TableId.of("public", "p_west"), false, 1, "FOR VALUES IN ('west')", false);
        SourceTables before = tables(parent, east);
        // east detached (a table of its own now), west attached
        SourceTables after = tables(parent, new SourceTables.Table(2, TableId.of("public", "p_east"), false, 0, null, false), west);
        assertThat(kinds(BY_NAME.compare(before, after))).containsExactlyInAnyOrder(TableChanges.Kind.STOP, TableChanges.Kind.STOP);
        TableChanges eachPartition = new TableChanges(table -> true, false, table -> table);
        // each partition is a table of its own: one detached keeps its rows and target, one attached is a new table
        assertThat(eachPartition.compare(before, after)).isEmpty();
    }

    @Test
    void aReplicaIdentityWithoutTheKeyStopsAtTheStartAndWhenItAppears()
    {
        SourceTables.Table keyed = table(1, "t_a");
        SourceTables.Table withoutKey = new SourceTables.Table(1, TableId.of("public", "t_a"), false, 0, null, true);
        assertThat(kinds(BY_NAME.initial(tables(withoutKey)))).containsExactly(TableChanges.Kind.STOP);
        assertThat(kinds(BY_NAME.compare(tables(keyed), tables(withoutKey)))).containsExactly(TableChanges.Kind.STOP);
        // seen once: not again at every reading
        assertThat(BY_NAME.compare(tables(withoutKey), tables(withoutKey))).isEmpty();
        // not captured: none of the sink's business
        assertThat(BY_NAME.initial(tables(new SourceTables.Table(2, TableId.of("public", "other"), false, 0, null, true)))).isEmpty();
        // a partition of a table published via its root
        SourceTables.Table parent = new SourceTables.Table(3, TableId.of("public", "t_p"), true, 0, null, false);
        SourceTables.Table partition = new SourceTables.Table(4, TableId.of("public", "p_east"), false, 3, "FOR VALUES IN ('east')", true);
        assertThat(kinds(BY_NAME.initial(tables(parent, partition)))).containsExactly(TableChanges.Kind.STOP);
    }

    /** Stores readings as if in the target, where target table "target"."t_a" was renamed to "t_b". */
    private static final TableChanges.StoredReading STORED = new TableChanges.StoredReading()
    {
        @Override
        public boolean targetRenamed(TableId from, TableId to)
        {
            return from.equals(TableId.of("target", "t_a")) && to.equals(TableId.of("target", "t_b"));
        }

        @Override
        public Optional<String> forgetStatement(TableId sourceTable)
        {
            return Optional.of("DELETE " + sourceTable);
        }
    };

    private static final TableChanges STORING = new TableChanges(table -> table.table().startsWith("t_"), true, table -> TableId.of("target", table.table()), STORED);

    @Test
    void theStoredReadingFindsWhatChangedWhileStoppedAsWhileStreaming()
    {
        SourceTables.Table withoutKey = new SourceTables.Table(3, TableId.of("public", "t_k"), false, 0, null, true);
        List<TableChanges.Finding> findings = STORING.sinceStored(tables(table(1, "t_a"), table(2, "t_c"), table(3, "t_k")),
                tables(table(1, "t_x"), table(5, "t_c"), withoutKey));
        assertThat(findings).extracting(TableChanges.Finding::kind, TableChanges.Finding::table).containsExactlyInAnyOrder(
                tuple(TableChanges.Kind.STOP, TableId.of("public", "t_k")),
                tuple(TableChanges.Kind.STOP_AT_FIRST_CHANGE, TableId.of("public", "t_x")),
                tuple(TableChanges.Kind.STOP_AT_OLD_NAME, TableId.of("public", "t_a")),
                tuple(TableChanges.Kind.STOP, TableId.of("public", "t_c")));
        assertThat(findings).filteredOn(finding -> finding.table().table().equals("t_c")).singleElement().satisfies(finding -> assertThat(finding.message())
                .matches("Source table \"public\".\"t_c\" was dropped and created again \\(oid 2, now 5\\) while pgsink was stopped \\(or before its last stop\\): .*"
                        + " and make pgsink forget the table as it stored it \\(DELETE \"public\".\"t_c\"\\), then start again\\."));
        // the identity is found once, as at every start
        assertThat(STORING.sinceStored(tables(withoutKey), tables(withoutKey))).hasSize(1);
    }

    @Test
    void aRenameFollowedInTheTargetGoesOn()
    {
        assertThat(kinds(STORING.sinceStored(tables(table(1, "t_a")), tables(table(1, "t_b"))))).containsExactlyInAnyOrder(TableChanges.Kind.WARNING, TableChanges.Kind.STOP_AT_OLD_NAME);
        assertThat(kinds(STORING.sinceStored(tables(table(1, "t_a")), tables(table(1, "t_c"))))).containsExactlyInAnyOrder(TableChanges.Kind.STOP_AT_FIRST_CHANGE, TableChanges.Kind.STOP_AT_OLD_NAME);
        // a table created under the old name is another table: its changes are its own
        assertThat(kinds(STORING.sinceStored(tables(table(1, "t_a")), tables(table(1, "t_c"), table(2, "t_a"))))).containsExactly(TableChanges.Kind.STOP_AT_FIRST_CHANGE);
        // while streaming, Debezium knows the table by its old name from its start
        assertThat(kinds(STORING.compare(tables(table(1, "t_a")), tables(table(1, "t_c"))))).containsExactly(TableChanges.Kind.STOP_AT_FIRST_CHANGE);
    }

    @Test
    void onlyCapturedTablesAndThePartitionsOfRootPublishedOnesAreStored()
    {
        SourceTables.Table parent = new SourceTables.Table(1, TableId.of("public", "t_p"), true, 0, null, false);
        SourceTables.Table east = new SourceTables.Table(2, TableId.of("public", "p_east"), true, 1, "FOR VALUES IN ('east')", false);
        SourceTables.Table eastOld = new SourceTables.Table(3, TableId.of("public", "p_east_old"), false, 2, "FOR VALUES FROM (0) TO (10)", false);
        SourceTables.Table other = table(4, "other");
        assertThat(STORING.captured(tables(parent, east, eastOld, other))).isEqualTo(tables(parent, east, eastOld));
        assertThat(new TableChanges(table -> table.table().startsWith("t_"), false, table -> table).captured(tables(parent, east, eastOld, other))).isEqualTo(tables(parent));
    }

    @Test
    void partitionsAttachedToOrDetachedFromAPartitionedPartitionStop()
    {
        SourceTables.Table parent = new SourceTables.Table(1, TableId.of("public", "t_p"), true, 0, null, false);
        SourceTables.Table east = new SourceTables.Table(2, TableId.of("public", "p_east"), true, 1, "FOR VALUES IN ('east')", false);
        SourceTables.Table low = new SourceTables.Table(3, TableId.of("public", "p_east_low"), false, 2, "FOR VALUES FROM (0) TO (10)", false);
        SourceTables.Table high = new SourceTables.Table(4, TableId.of("public", "p_east_high"), false, 2, "FOR VALUES FROM (10) TO (20)", false);
        List<TableChanges.Finding> findings = STORING.compare(tables(parent, east, low), tables(parent, east, new SourceTables.Table(3, TableId.of("public", "p_east_low"), false, 0, null, false), high));
        assertThat(findings).extracting(TableChanges.Finding::kind).containsExactly(TableChanges.Kind.STOP, TableChanges.Kind.STOP);
        assertThat(findings).extracting(TableChanges.Finding::message).allSatisfy(message -> assertThat(message).contains("target table \"target\".\"t_p\""));
        assertThat(STORING.compare(tables(parent, east, low), tables(parent, east, low))).isEmpty();
    }
}
