package io.pgsink.merge.schema;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourceAttribute;
import io.pgsink.core.change.SourceColumns;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ColumnRenamesTest
{
    private static final TableId TABLE = TableId.of("public", "t");

    @Test
    void aColumnKeepingItsNumberUnderANewNameIsRenamed()
    {
        ColumnRenames.Recorded before = ColumnRenames.Recorded.of(schema("id", "a", "z"), Optional.of(List.of(live(1, "id"), live(2, "a"), live(3, "z"))));
        SourceColumns now = catalog(live(1, "id"), live(2, "b"), live(3, "z"));
        assertThat(ColumnRenames.detect(before, schema("id", "b", "z"), target("id", "a", "z"), now)).isEqualTo(Map.of("a", "b"));
    }

    @Test
    void aDroppedAndAnAddedColumnAreNoRename()
    {
        ColumnRenames.Recorded before = ColumnRenames.Recorded.of(schema("id", "a"), Optional.of(List.of(live(1, "id"), live(2, "a"))));
        SourceColumns now = catalog(live(1, "id"), dropped(2), live(3, "b"));
        assertThat(ColumnRenames.detect(before, schema("id", "b"), target("id", "a"), now)).isEmpty();
    }

    @Test
    void theCatalogAsTheSinkStartedTellsRenamesAndAdditionsAfterTheStart()
    {
        ColumnRenames.Recorded initial = ColumnRenames.Recorded.initial(List.of(live(1, "id"), dropped(2), live(3, "a")));
        // "old" was dropped before the start and stays in the target; a renamed, c added since
        SourceColumns now = catalog(live(1, "id"), dropped(2), live(3, "b"), live(4, "c"));
        assertThat(ColumnRenames.detect(initial, schema("id", "b", "c"), target("id", "old", "a"), now)).isEqualTo(Map.of("a", "b"));
        assertThat(ColumnRenames.detect(initial, schema("id", "a", "c"), target("id", "old", "a"), now)).isEmpty();
    }

    @Test
    void aRenameBeforeTheStartCannotBeToldFromAColumnInTheTargetOnly()
    {
        ColumnRenames.Recorded initial = ColumnRenames.Recorded.initial(List.of(live(1, "id"), live(2, "b")));
        assertThatThrownBy(() -> ColumnRenames.detect(initial, schema("id", "b"), target("id", "a"), catalog(live(1, "id"), live(2, "b"))))
                .isInstanceOf(SinkException.class)
                .hasMessageStartingWith("Cannot tell whether column(s) [b] of \"public\".\"t\" are column(s) [a] of \"public\".\"t\" renamed on the source");
    }

    @Test
    void theSinksOwnMetadataColumnsNeverCountAsColumnsGoneFromTheSource()
    {
        // the first schema after a start has a column added while the sink was stopped; the target's
        // other extra columns are change metadata the sink writes, not source columns renamed away
        ColumnRenames.Recorded initial = ColumnRenames.Recorded.initial(List.of(live(1, "id"), live(2, "a"), live(3, "b")));
        SourceColumns now = catalog(live(1, "id"), live(2, "a"), live(3, "b"));
        assertThat(ColumnRenames.detect(initial, schema("id", "a", "b"), target("id", "a", "_op", "_deleted"), now, Set.of("_op", "_deleted")::contains)).isEmpty();
        assertThatThrownBy(() -> ColumnRenames.detect(initial, schema("id", "a", "b"), target("id", "a", "_op", "_deleted"), now, column -> false))
                .isInstanceOf(SinkException.class);
        // nor without a catalog, as in Kafka Connect
        assertThat(ColumnRenames.detect(null, schema("id", "a", "b"), target("id", "a", "_op"), SourceColumns.UNKNOWN, Set.of("_op")::contains)).isEmpty();
    }

    @Test
    void withoutACatalogANewColumnWhileAnotherWentMissingStops()
    {
        ColumnRenames.Recorded before = ColumnRenames.Recorded.of(schema("id", "a"), Optional.empty());
        assertThatThrownBy(() -> ColumnRenames.detect(before, schema("id", "b"), target("id", "a"), SourceColumns.UNKNOWN))
                .hasMessageContaining("the source catalog cannot be read (a Kafka Connect sink has only its records)");
        // only added, or only dropped: nothing to tell
        assertThat(ColumnRenames.detect(before, schema("id", "a", "b"), target("id", "a"), SourceColumns.UNKNOWN)).isEmpty();
        assertThat(ColumnRenames.detect(before, schema("id"), target("id", "a"), SourceColumns.UNKNOWN)).isEmpty();
    }

    @Test
    void theRenamedTargetKeepsTypesAndKey()
    {
        TargetTable renamed = ColumnRenames.renamed(target("id", "a"), Map.of("id", "key"));
        assertThat(renamed.columnNames()).containsExactly("key", "a");
        assertThat(renamed.primaryKey()).containsExactly("key");
        assertThat(ColumnRenames.statements(target("id", "a"), Map.of("a", "B b"))).containsExactly("ALTER TABLE \"public\".\"t\" RENAME COLUMN \"a\" TO \"B b\"");
    }

    @Test
    void constantDefaultsAsPostgreSqlPrintsThem()
    {
        assertThat(List.of("42", "'it''s'::text", "12.500::numeric(8,3)", "true", "'2024-02-29'::date", "NULL::integer", "'{1,2}'::integer[]", "'x'::character varying"))
                .allMatch(ColumnDefaults::isConstant);
        assertThat(List.of("now()", "CURRENT_USER", "nextval('s'::regclass)", "random()", "(1 + 2)", "CURRENT_TIMESTAMP"))
                .noneMatch(ColumnDefaults::isConstant);
    }

    private static TableSchema schema(String... columns)
    {
        List<ColumnSchema> list = new ArrayList<>();
        for (String column : columns) {
            list.add(new ColumnSchema(column, "int4", !column.equals("id")));
        }
        return new TableSchema(TABLE, list, List.of(columns[0]));
    }

    private static TargetTable target(String... columns)
    {
        List<TargetColumn> list = new ArrayList<>();
        for (String column : columns) {
            list.add(new TargetColumn(column, "integer", "int4", column.equals(columns[0])));
        }
        return new TargetTable(TABLE, list, List.of(columns[0]), List.of());
    }

    private static SourceAttribute live(int number, String name)
    {
        return new SourceAttribute(number, name, false, null, null);
    }

    private static SourceAttribute dropped(int number)
    {
        return new SourceAttribute(number, "........pg.dropped." + number + "........", true, null, null);
    }

    private static SourceColumns catalog(SourceAttribute... attributes)
    {
        return table -> Optional.of(List.of(attributes));
    }
}
