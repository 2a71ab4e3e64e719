package io.pgsink.core.config;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The metadata, soft-delete and history keys: defaults, full mapping, and the combinations refused. */
class ChangeMetadataTest
{
    private static Map<String, String> properties(String... keysAndValues)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put(SinkConfig.TARGET_URL, "jdbc:postgresql://db/x");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            properties.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return properties;
    }

    private static List<String> problems(String... keysAndValues)
    {
        return SinkConfig.problems(properties(keysAndValues)).stream().map(ConfigProblem::message).toList();
    }

    @Test
    void defaultsWriteNoMetadataAndMergeEveryTable()
    {
        ChangeMetadata metadata = SinkConfig.parse(properties()).changeMetadata();
        assertThat(metadata.columns()).isEmpty();
        assertThat(metadata.deleteMode()).isEqualTo(DeleteMode.HARD);
        assertThat(metadata.softDeletes()).isFalse();
        assertThat(metadata.isHistory(TableId.of("public", "orders"))).isFalse();
    }

    @Test
    void fullMapping()
    {
        ChangeMetadata metadata = SinkConfig.parse(properties(
                "metadata.operation.column", "_op",
                "metadata.source.timestamp.column", "_source_ts",
                "metadata.source.position.column", "_position",
                "metadata.applied.timestamp.column", "_applied_at",
                "delete.mode", "soft",
                "delete.flag.column", "_deleted",
                "delete.timestamp.column", "_deleted_at",
                "history.table.include.list", "public\\.orders, audit\\..*")).changeMetadata();
        assertThat(metadata.columns()).containsExactly(
                new ChangeMetadata.Column(ChangeMetadata.Kind.OPERATION, "_op"),
                new ChangeMetadata.Column(ChangeMetadata.Kind.SOURCE_TIMESTAMP, "_source_ts"),
                new ChangeMetadata.Column(ChangeMetadata.Kind.SOURCE_POSITION, "_position"),
                new ChangeMetadata.Column(ChangeMetadata.Kind.APPLIED_TIMESTAMP, "_applied_at"),
                new ChangeMetadata.Column(ChangeMetadata.Kind.DELETED_FLAG, "_deleted"),
                new ChangeMetadata.Column(ChangeMetadata.Kind.DELETED_TIMESTAMP, "_deleted_at"));
        assertThat(metadata.softDeletes()).isTrue();
        assertThat(metadata.isHistory(TableId.of("public", "orders"))).isTrue();
        assertThat(metadata.isHistory(TableId.of("audit", "events"))).isTrue();
        assertThat(metadata.isHistory(TableId.of("public", "orders2"))).isFalse();
        assertThat(metadata.isHistory(TableId.of("public", "customers"))).isFalse();

        ChangeMetadata everything = SinkConfig.parse(properties("table.mode", "history", "metadata.operation.column", "op", "metadata.source.position.column", "pos")).changeMetadata();
        assertThat(everything.isHistory(TableId.of("any", "table"))).isTrue();
    }

    @Test
    void badCombinationsAreReportedAtOnce()
    {
        assertThat(problems("delete.mode", "soft")).containsExactly(
                "Invalid change metadata from delete.mode='soft', delete.flag.column='', delete.timestamp.column='': delete.mode=soft marks deleted rows in delete.flag.column"
                        + " and/or delete.timestamp.column; name at least one");
        assertThat(problems("delete.flag.column", "_deleted")).containsExactly(
                "Invalid change metadata from delete.mode='hard', delete.flag.column='_deleted', delete.timestamp.column='': the deleted flag and timestamp columns are only"
                        + " written with delete.mode=soft");
        assertThat(problems("table.mode", "history", "history.table.include.list", "public\\.t", "metadata.operation.column", "_op")).containsExactly(
                "Invalid change metadata from table.mode='history', history.table.include.list='public\\.t': table.mode=history makes every table a history table already;"
                        + " list tables in history.table.include.list only with table.mode=merge",
                "Invalid change metadata from table.mode='history', history.table.include.list='public\\.t', metadata.operation.column='_op', metadata.source.position.column='':"
                        + " history tables need metadata.operation.column and metadata.source.position.column, which tell their rows apart and order them");
        assertThat(problems("metadata.operation.column", "meta", "metadata.source.position.column", "meta")).containsExactly(
                "Invalid change metadata from metadata.operation.column='meta', metadata.source.position.column='meta': two metadata columns cannot have the same name");
        assertThat(problems("history.table.include.list", "public\\.(", "delete.mode", "sometimes")).containsExactlyInAnyOrder(
                "Invalid value 'public\\.(' for configuration history.table.include.list: 'public\\.(' is not a regular expression: Unclosed group",
                "Invalid value 'sometimes' for configuration delete.mode: must be one of hard, soft");
        assertThatThrownBy(() -> SinkConfig.parse(properties("delete.mode", "soft")))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessageContaining("delete.flag.column");
    }
}
