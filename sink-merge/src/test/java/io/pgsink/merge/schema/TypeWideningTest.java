package io.pgsink.merge.schema;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.pgsink.merge.schema.TypeWidening.Verdict.HOLDS;
import static io.pgsink.merge.schema.TypeWidening.Verdict.INCOMPATIBLE;
import static io.pgsink.merge.schema.TypeWidening.Verdict.WIDENS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TypeWideningTest
{
    @Test
    void safeWideningsHoldingTypesAndTheRest()
    {
        assertThat(TypeWidening.compare(column("integer", "int4"), "int8")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("smallint", "int2"), "int4")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("bigint", "int8"), "int4")).isEqualTo(HOLDS);
        assertThat(TypeWidening.compare(column("real", "float4"), "float8")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("character varying(10)", "varchar"), "varchar(20)")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("character varying(10)", "varchar"), "text")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("character varying(10)", "varchar"), "varchar")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("text", "text"), "varchar(20)")).isEqualTo(HOLDS);
        assertThat(TypeWidening.compare(column("character varying(20)", "varchar"), "varchar(10)")).isEqualTo(HOLDS);
        assertThat(TypeWidening.compare(column("numeric(6,2)", "numeric"), "numeric(12,4)")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("numeric(6,2)", "numeric"), "numeric")).isEqualTo(WIDENS);
        assertThat(TypeWidening.compare(column("numeric(12,4)", "numeric"), "numeric(6,2)")).isEqualTo(HOLDS);
        // fewer decimals, or fewer integer digits: narrowing somewhere
        assertThat(TypeWidening.compare(column("numeric(6,2)", "numeric"), "numeric(12,1)")).isEqualTo(INCOMPATIBLE);
        assertThat(TypeWidening.compare(column("numeric(6,2)", "numeric"), "numeric(6,4)")).isEqualTo(INCOMPATIBLE);
        assertThat(TypeWidening.compare(column("timestamp without time zone", "timestamp"), "timestamptz")).isEqualTo(INCOMPATIBLE);
        assertThat(TypeWidening.compare(column("integer", "int4"), "text")).isEqualTo(INCOMPATIBLE);
        assertThat(TypeWidening.compare(column("character(3)", "bpchar"), "bpchar(5)")).isEqualTo(HOLDS);
    }

    @Test
    void typeChangesWidenOnlyWhereAllowedAndStopOnNarrowing()
    {
        TableId id = TableId.of("public", "t");
        TableSchema before = new TableSchema(id, List.of(new ColumnSchema("id", "int4", false), new ColumnSchema("n", "numeric(6,2)", false)), List.of("id"));
        TableSchema after = new TableSchema(id, List.of(new ColumnSchema("id", "int8", false), new ColumnSchema("n", "numeric(8,2)", true)), List.of("id"));
        TargetTable target = new TargetTable(id, List.of(column("id", "integer", "int4", true), column("n", "numeric(6,2)", "numeric", true)), List.of("id"), List.of());
        assertThat(SchemaEvolution.typeChanges(before, after, target, true)).containsExactly(
                "ALTER TABLE \"public\".\"t\" ALTER COLUMN \"id\" TYPE int8",
                "ALTER TABLE \"public\".\"t\" ALTER COLUMN \"n\" DROP NOT NULL",
                "ALTER TABLE \"public\".\"t\" ALTER COLUMN \"n\" TYPE numeric(8,2)");
        assertThatThrownBy(() -> SchemaEvolution.typeChanges(before, after, target, false))
                .isInstanceOf(SinkException.class)
                .hasMessage("Incompatible type change in \"public\".\"t\": id changed from int4 to int8 but is integer in the target (a safe widening: schema.evolution=add-columns-and-widen applies it);"
                        + " n changed from numeric(6,2) to numeric(8,2) but is numeric(6,2) in the target (a safe widening: schema.evolution=add-columns-and-widen applies it)."
                        + " Change the target column type (ALTER TABLE \"public\".\"t\" ALTER COLUMN ... TYPE ...) and restart the sink.");
        TableSchema narrowed = new TableSchema(id, List.of(new ColumnSchema("id", "int4", false), new ColumnSchema("n", "numeric(6,1)", false)), List.of("id"));
        assertThatThrownBy(() -> SchemaEvolution.typeChanges(before, narrowed, target, true)).hasMessageContaining("n changed from numeric(6,2) to numeric(6,1) but is numeric(6,2) in the target.");
    }

    private static TargetColumn column(String declared, String encoding)
    {
        return column("c", declared, encoding, false);
    }

    private static TargetColumn column(String name, String declared, String encoding, boolean notNull)
    {
        return new TargetColumn(name, declared, encoding, notNull);
    }
}
