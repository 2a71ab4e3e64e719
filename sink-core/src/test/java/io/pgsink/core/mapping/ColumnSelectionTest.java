package io.pgsink.core.mapping;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ColumnSelectionTest
{
    private static final TableId PEOPLE = TableId.of("public", "people");
    private static final TableSchema SCHEMA = new TableSchema(PEOPLE,
            List.of(new ColumnSchema("id", "int4", false), new ColumnSchema("name", "text", true), new ColumnSchema("Secret", "text", true), new ColumnSchema("notes", "text", true)),
            List.of("id"));
    private static final SourcePosition POSITION = new SourcePosition("p", "1");

    private static SinkConfig config(String... keysAndValues)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("target.url", "jdbc:postgresql://localhost/db");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            properties.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return SinkConfig.parse(properties);
    }

    @Test
    void excludesAndRenamesColumnsOfEveryOperation()
    {
        ColumnSelection selection = config("column.exclude.list", "public\\.people\\.secret", "column.rename", "public.people.name:full_name").columnSelection();
        ColumnProjection projection = selection.project(SCHEMA);
        assertThat(projection.target().columnNames()).containsExactly("id", "full_name", "notes");
        assertThat(projection.target().keyColumns()).containsExactly("id");
        assertThat(projection.target().columns().get(1).typeName()).isEqualTo("text");

        ChangeEvent insert = projection.apply(ChangeEvent.insert(SCHEMA, new Object[] {1, "ann", "pw", UnavailableValue.INSTANCE}, POSITION, 0));
        assertThat(insert.schema()).isSameAs(projection.target());
        assertThat(insert.after()).containsExactly(1, "ann", UnavailableValue.INSTANCE);
        ChangeEvent update = projection.apply(ChangeEvent.update(SCHEMA, new Object[] {1, null, null, null}, new Object[] {2, "bob", "pw", "n"}, POSITION, 0));
        assertThat(update.operation()).isEqualTo(Operation.UPDATE);
        assertThat(update.before()).containsExactly(1, null, null);
        assertThat(update.after()).containsExactly(2, "bob", "n");
        ChangeEvent moved = projection.apply(ChangeEvent.insertMovedFrom(SCHEMA, new Object[] {1, null, null, null}, new Object[] {2, "bob", "pw", "n"}, POSITION, 0));
        assertThat(moved.before()).containsExactly(1, null, null);
        ChangeEvent delete = projection.apply(ChangeEvent.delete(SCHEMA, new Object[] {2, null, null, null}, POSITION, 0));
        assertThat(delete.before()).containsExactly(2, null, null);
        ChangeEvent truncate = ChangeEvent.truncate(PEOPLE, POSITION, 0);
        assertThat(projection.apply(truncate)).isSameAs(truncate);
    }

    @Test
    void includeListMatchesWholeNamesIgnoringCase()
    {
        ColumnSelection selection = config("column.include.list", "public.people.id,PUBLIC.PEOPLE.NAME,public.people.no").columnSelection();
        assertThat(selection.project(SCHEMA).target().columnNames()).containsExactly("id", "name");
    }

    @Test
    void renamesOnlyKeepRowsAsTheyAre()
    {
        ColumnProjection projection = config("column.rename", "public.people.id:person_id").columnSelection().project(SCHEMA);
        Object[] row = {1, "ann", "pw", "n"};
        ChangeEvent event = projection.apply(ChangeEvent.insert(SCHEMA, row, POSITION, 0));
        assertThat(event.after()).isSameAs(row);
        assertThat(event.schema().keyColumns()).containsExactly("person_id");
        assertThat(config().columnSelection().project(SCHEMA).isIdentity()).isTrue();
    }

    @Test
    void everyProblemOfATableNamesTableAndColumn()
    {
        ColumnSelection selection = config("column.exclude.list", "public.people.id,public.people.name",
                "column.rename", "public.people.missing:x,public.people.name:n,public.people.notes:Secret").columnSelection();
        assertThatThrownBy(() -> selection.project(SCHEMA))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessageContaining("Invalid column selection for \"public\".\"people\" (4 problems)")
                .hasMessageContaining("column.exclude.list: excludes key column id of \"public\".\"people\"; key columns are always written")
                .hasMessageContaining("columns Secret and notes of \"public\".\"people\" would both be written to target column Secret")
                .hasMessageContaining("renames column missing that \"public\".\"people\" does not have (columns: [id, name, Secret, notes])")
                .hasMessageContaining("renames column name of \"public\".\"people\", which column.exclude.list leaves out");
        assertThat(config("column.include.list", "public.people.name").columnSelection().problems(SCHEMA))
                .extracting(ConfigProblem::message)
                .containsExactly("Invalid value 'public.people.name' for configuration column.include.list: leaves out key column id of \"public\".\"people\"; key columns are always written (the sink merges by key): add it to the list");
    }

    @Test
    void entriesMatchingNoCapturedColumnAreProblems()
    {
        ColumnSelection selection = config("column.exclude.list", "public.people.notes,public.nothing.*", "column.rename", "public.other.a:b").columnSelection();
        List<ConfigProblem> problems = new ArrayList<>(selection.problems(List.of(SCHEMA)));
        assertThat(problems).extracting(ConfigProblem::message).containsExactly(
                "Invalid value 'public.people.notes,public.nothing.*' for configuration column.exclude.list: entry 'public.nothing.*' matches no column of a captured table"
                        + " (entries are regular expressions matched whole against schema.table.column, ignoring case)",
                "Invalid value 'public.other.a:b' for configuration column.rename: entry 'public.other.a:b' names table \"public\".\"other\", which is not captured (names are exact and case-sensitive)");
    }

    @Test
    void invalidSettingsAreReportedTogether()
    {
        assertThatThrownBy(() -> config("column.include.list", "a.b.c", "column.exclude.list", "a.b.d"))
                .hasMessageContaining("Invalid column selection from column.include.list='a.b.c', column.exclude.list='a.b.d': set one of the two lists, not both");
        assertThatThrownBy(() -> config("column.exclude.list", "a.b.(", "column.rename", "a.b:c,a.b.c:d,a.b.c:e,x.y.z:"))
                .hasMessageContaining("(2 problems)")
                .hasMessageContaining("Invalid value 'a.b.(' for configuration column.exclude.list: 'a.b.(' is not a regular expression: Unclosed group")
                .hasMessageContaining("'a.b:c' is not schema.table.column:new_name; a.b.c is renamed twice; 'x.y.z:' is not schema.table.column:new_name");
    }
}
