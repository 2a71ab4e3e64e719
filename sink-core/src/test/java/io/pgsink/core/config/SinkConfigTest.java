package io.pgsink.core.config;

import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValues;
import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.ErrorsTolerance;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.TableNameFormat;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SinkConfigTest
{
    @Test
    void defaults()
    {
        SinkConfig config = SinkConfig.parse(Map.of("target.url", "jdbc:postgresql://localhost/db"));
        assertThat(config.sinkName()).isEqualTo("pgsink");
        assertThat(config.targetUser()).isEmpty();
        assertThat(config.targetPassword()).isEmpty();
        assertThat(config.targetDialect()).isEqualTo(TargetDialect.AUTO);
        assertThat(config.flushPolicy()).isEqualTo(new FlushPolicy(10_000, 64L * 1024 * 1024, 1000));
        assertThat(config.copyFormat()).isEqualTo(CopyFormat.DEFAULT);
        assertThat(config.copyDataFormat()).isEqualTo(CopyDataFormat.CSV);
        assertThat(config.offsetsSchema()).isEqualTo("public");
        assertThat(config.offsetsTable()).isEqualTo("pgsink_offsets");
        assertThat(config.appendOnlyWithoutKey()).isFalse();
        assertThat(config.targetJdbcProperties()).isEmpty();
        assertThat(config.toleratesRejectedRows()).isFalse();
        assertThat(config.deadLetterTable()).isEqualTo("pgsink_dead_letters");
        assertThat(config.tableNameFormat().targetOf(TableId.of("a", "b"))).isEqualTo(TableId.of("a", "b"));
        assertThat(config.updateMode()).isEqualTo(UpdateMode.AUTO);
        assertThat(config.mergesUpdates()).isTrue();
        assertThat(config.schemaEvolution()).isEqualTo(SchemaEvolutionLevel.NONE);
        assertThat(config.evolvesSchema()).isFalse();
        assertThat(config.tablesWithoutKey()).isEqualTo(TablesWithoutKey.FAIL);
        assertThat(config.errorsTolerance()).isEqualTo(ErrorsTolerance.NONE);
        assertThat(config.retryBackoff()).isEqualTo(new Backoff(500, 30_000));
        assertThat(config.smallBatchMaxEvents()).isEqualTo(256);
    }

    /** Every key, its type and its default, in the configuration reference's order: a key added, dropped or changed is a decision. */
    @Test
    void keyTable()
    {
        Map<String, String> table = new LinkedHashMap<>();
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            table.put(key.name(), key.type().kind() + (key.secret() ? " secret" : "") + " " + key.defaultValue().map(value -> "'" + value + "'").orElse("(required)"));
        }
        assertThat(table).containsExactly(
                Map.entry("sink.name", "STRING 'pgsink'"),
                Map.entry("target.url", "STRING (required)"),
                Map.entry("target.user", "STRING ''"),
                Map.entry("target.password", "STRING secret ''"),
                Map.entry("target.dialect", "CHOICE 'auto'"),
                Map.entry("target.update.mode", "CHOICE 'auto'"),
                Map.entry("target.table.name.format", "STRING '${schema}.${table}'"),
                Map.entry("target.session.replication.role", "CHOICE 'origin'"),
                Map.entry("target.toast.compression", "CHOICE 'lz4'"),
                Map.entry("column.include.list", "STRING ''"),
                Map.entry("column.exclude.list", "STRING ''"),
                Map.entry("column.rename", "STRING ''"),
                Map.entry("schema.evolution", "CHOICE 'none'"),
                Map.entry("tables.without.key", "CHOICE 'fail'"),
                Map.entry("flush.max.events", "LONG '10000'"),
                Map.entry("buffer.max.bytes", "LONG '67108864'"),
                Map.entry("flush.interval.ms", "LONG '1000'"),
                Map.entry("flush.pipelined", "BOOLEAN 'false'"),
                Map.entry("flush.small.batch.max.events", "LONG '256'"),
                Map.entry("copy.format", "CHOICE 'csv'"),
                Map.entry("copy.delimiter", "CHARACTER ','"),
                Map.entry("copy.quote", "CHARACTER '\"'"),
                Map.entry("copy.escape", "CHARACTER '\"'"),
                Map.entry("copy.null", "STRING ''"),
                Map.entry("copy.nul.character", "CHOICE 'fail'"),
                Map.entry("offsets.schema", "STRING 'public'"),
                Map.entry("offsets.table", "STRING 'pgsink_offsets'"),
                Map.entry("errors.tolerance", "CHOICE 'none'"),
                Map.entry("errors.deadletter.table", "STRING 'pgsink_dead_letters'"),
                Map.entry("retry.backoff.max.ms", "LONG '30000'"),
                Map.entry("metadata.operation.column", "STRING ''"),
                Map.entry("metadata.source.timestamp.column", "STRING ''"),
                Map.entry("metadata.source.position.column", "STRING ''"),
                Map.entry("metadata.applied.timestamp.column", "STRING ''"),
                Map.entry("delete.mode", "CHOICE 'hard'"),
                Map.entry("delete.flag.column", "STRING ''"),
                Map.entry("delete.timestamp.column", "STRING ''"),
                Map.entry("table.mode", "CHOICE 'merge'"),
                Map.entry("history.table.include.list", "STRING ''"));
        assertThat(SinkKeys.TARGET_DIALECT.type().choices()).containsExactly("auto", "postgresql", "greenplum");
        assertThat(SinkKeys.TARGET_UPDATE_MODE.type().choices()).containsExactly("auto", "delete-insert");
        assertThat(SinkKeys.SCHEMA_EVOLUTION.type().choices()).containsExactly("none", "add-columns", "add-columns-and-widen");
        assertThat(SinkKeys.TABLES_WITHOUT_KEY.type().choices()).containsExactly("fail", "append-only");
        assertThat(SinkKeys.COPY_FORMAT.type().choices()).containsExactly("csv", "binary");
        assertThat(SinkKeys.COPY_NUL_CHARACTER.type().choices()).containsExactly("fail", "strip");
        assertThat(SinkKeys.ERRORS_TOLERANCE.type().choices()).containsExactly("none", "all");
        assertThat(SinkKeys.DELETE_MODE.type().choices()).containsExactly("hard", "soft");
        assertThat(SinkKeys.TABLE_MODE.type().choices()).containsExactly("merge", "history");
    }

    @Test
    void fullMapping()
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("sink.name", "orders-sink");
        properties.put("target.url", "jdbc:postgresql://db/x");
        properties.put("target.user", "writer");
        properties.put("target.password", "s3cret");
        properties.put("target.dialect", "greenplum");
        properties.put("target.table.name.format", "dw.${schema}_${table}");
        properties.put("tables.without.key", "append-only");
        properties.put("flush.max.events", "500");
        properties.put("buffer.max.bytes", "1024");
        properties.put("flush.interval.ms", "0");
        properties.put("copy.format", "binary");
        properties.put("copy.delimiter", "|");
        properties.put("copy.quote", "'");
        properties.put("copy.escape", "\\");
        properties.put("copy.null", "\\N");
        properties.put("copy.nul.character", "strip");
        properties.put("offsets.schema", "meta");
        properties.put("offsets.table", "positions");
        properties.put("target.jdbc.sslmode", "verify-full");
        properties.put("errors.tolerance", "all");
        properties.put("errors.deadletter.table", "rejects");
        properties.put("target.update.mode", "delete-insert");
        properties.put("schema.evolution", "add-columns");
        properties.put("retry.backoff.max.ms", "2000");
        SinkConfig config = SinkConfig.parse(properties);
        assertThat(config.sinkName()).isEqualTo("orders-sink");
        assertThat(config.targetUrl()).isEqualTo("jdbc:postgresql://db/x");
        assertThat(config.targetUser()).contains("writer");
        assertThat(config.targetPassword()).contains("s3cret");
        assertThat(config.targetDialect()).isEqualTo(TargetDialect.GREENPLUM);
        assertThat(config.tableNameFormat().targetOf(TableId.of("shop", "orders"))).isEqualTo(TableId.of("dw", "shop_orders"));
        assertThat(config.appendOnlyWithoutKey()).isTrue();
        assertThat(config.flushPolicy()).isEqualTo(new FlushPolicy(500, 1024, 0));
        assertThat(config.copyFormat()).isEqualTo(new CopyFormat('|', '\'', '\\', "\\N", NulCharacterHandling.STRIP));
        assertThat(config.copyDataFormat()).isEqualTo(CopyDataFormat.BINARY);
        assertThat(config.offsetsSchema()).isEqualTo("meta");
        assertThat(config.offsetsTable()).isEqualTo("positions");
        assertThat(config.targetJdbcProperties()).containsExactly(Map.entry("sslmode", "verify-full"));
        assertThat(config.toleratesRejectedRows()).isTrue();
        assertThat(config.deadLetterTable()).isEqualTo("rejects");
        assertThat(config.updateMode()).isEqualTo(UpdateMode.DELETE_INSERT);
        assertThat(config.mergesUpdates()).isFalse();
        assertThat(config.schemaEvolution()).isEqualTo(SchemaEvolutionLevel.ADD_COLUMNS);
        assertThat(config.evolvesSchema()).isTrue();
        assertThat(config.tablesWithoutKey()).isEqualTo(TablesWithoutKey.APPEND_ONLY);
        assertThat(config.errorsTolerance()).isEqualTo(ErrorsTolerance.ALL);
        assertThat(config.retryBackoff()).isEqualTo(new Backoff(500, 2000));
        assertThat(config.describe()).containsEntry("target.password", "<masked>").containsEntry("sink.name", "'orders-sink'");
        assertThat(config.toString()).doesNotContain("s3cret");
    }

    @Test
    void reportsEveryProblemAtOnceWithoutSecrets()
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("flush.max.events", "many");
        properties.put("flush.interval.ms", "-1");
        properties.put("copy.delimiter", ",,");
        properties.put("target.dialect", "oracle");
        properties.put("target.password", "");
        properties.put("target.pasword", "typo");
        properties.put("target.table.name.format", "${schema}.${nope}");
        assertThatThrownBy(() -> SinkConfig.parse(properties))
                .isInstanceOf(SinkException.class)
                .extracting(e -> ((SinkException) e).errorCode()).isEqualTo(ErrorCode.CONFIG);
        assertThatThrownBy(() -> SinkConfig.parse(properties))
                // the table name format is checked with the other keys, not only once they are all valid
                .hasMessageContaining("7 problems")
                .hasMessageContaining("Invalid value '${schema}.${nope}' for configuration target.table.name.format: unknown placeholder ${nope}")
                .hasMessageContaining("Missing required configuration target.url")
                .hasMessageContaining("Invalid value 'many' for configuration flush.max.events: not a whole number")
                .hasMessageContaining("Invalid value '-1' for configuration flush.interval.ms: must be zero or more")
                .hasMessageContaining("Invalid value ',,' for configuration copy.delimiter: must be exactly one character")
                .hasMessageContaining("Invalid value 'oracle' for configuration target.dialect: must be one of auto, postgresql, greenplum")
                .hasMessageContaining("Unknown configuration target.pasword")
                .hasMessageNotContaining("typo");
    }

    @Test
    void problemsListsWhatParseWouldReport()
    {
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d"))).isEmpty();
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d", "flush.small.batch.max.events", "0"))).isEmpty();
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d", "flush.small.batch.max.events", "-1"))).extracting(ConfigProblem::message).containsExactly(
                "Invalid value '-1' for configuration flush.small.batch.max.events: must be between 0 and 100000");
        assertThat(SinkConfig.parse(Map.of("target.url", "jdbc:postgresql://h/d", "flush.small.batch.max.events", "100000")).smallBatchMaxEvents()).isEqualTo(100_000);
        assertThat(SinkConfig.problems(Map.of("flush.max.events", "0", "bogus", "x"))).extracting(ConfigProblem::message).containsExactly(
                "Unknown configuration bogus: not a pgsink setting (known: " + String.join(", ", SinkConfig.KEYS.stream().map(key -> key.name()).toList()) + ", target.jdbc.*)",
                "Missing required configuration target.url: JDBC URL of the target PostgreSQL or Greenplum database, e.g. jdbc:postgresql://host:5432/db.",
                "Invalid value '0' for configuration flush.max.events: must be at least 1");
    }

    /**
     * The keys that name a table refuse an empty value (an empty offsets.table failed in SQL).
     * sink.name may be empty here: the Kafka Connect sink reads it as the connector's name; the
     * standalone service refuses it.
     */
    @Test
    void emptyNamesAreProblems()
    {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("target.url", "jdbc:postgresql://h/d");
        for (String key : List.of("offsets.schema", "offsets.table", "errors.deadletter.table")) {
            properties.put(key, "");
        }
        assertThat(SinkConfig.problems(properties)).extracting(ConfigProblem::message).containsExactly(
                "Invalid value '' for configuration offsets.schema: must not be empty",
                "Invalid value '' for configuration offsets.table: must not be empty",
                "Invalid value '' for configuration errors.deadletter.table: must not be empty");
        // empty stays "none" for the metadata columns, as documented
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d", "metadata.operation.column",
                ""))).isEmpty();
    }

    @Test
    void crossFieldCopyFormatProblemsNameAllKeys()
    {
        assertThatThrownBy(() -> SinkConfig.parse(Map.of("target.url", "jdbc:postgresql://h/d", "copy.delimiter", "\"")))
                .hasMessageContaining("copy.delimiter='\"', copy.quote='\"'")
                .hasMessageContaining("delimiter and quote must differ");
        assertThatThrownBy(() -> SinkConfig.parse(Map.of("target.url", "jdbc:postgresql://h/d", "copy.null", "a,b")))
                .hasMessageContaining("the NULL string must not contain the delimiter ','");
        assertThatThrownBy(() -> SinkConfig.parse(Map.of("target.url", "jdbc:mysql://h/d")))
                .hasMessageContaining("Invalid value 'jdbc:mysql://h/d' for configuration target.url: must be a pgjdbc URL");
    }

    @Test
    void problemsAreStructured()
    {
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d", "target.password", "s3cret", "copy.quote", "|", "copy.delimiter", "|", "retry.backoff.max.ms", "0")))
                .containsExactly(
                        new ConfigProblem(ConfigProblem.Kind.INVALID, "retry.backoff.max.ms", Optional.of("'0'"), "must be at least 1"),
                        new ConfigProblem(ConfigProblem.Kind.COMBINATION, "copy.delimiter", Optional.of("COPY format from copy.delimiter='|', copy.quote='|', copy.escape='\"', copy.null=''"),
                                "delimiter and quote must differ, both are '|'"));
        assertThat(SinkConfig.problems(Map.of("target.url", "", "target.pasword", "s3cret"))).containsExactly(
                new ConfigProblem(ConfigProblem.Kind.UNKNOWN, "target.pasword", Optional.empty(),
                        "not a pgsink setting (known: " + String.join(", ", SinkConfig.KEYS.stream().map(key -> key.name()).toList()) + ", target.jdbc.*)"),
                new ConfigProblem(ConfigProblem.Kind.INVALID, "target.url", Optional.of("''"), "must not be empty"));
        // a secret's value is never kept, not even in the problem
        ConfigKey<Long> secret = ConfigKey.required("test.secret", ConfigType.LONG, "A secret number.").asSecret();
        assertThat(secret.check("s3cret")).contains(new ConfigProblem(ConfigProblem.Kind.INVALID, "test.secret", Optional.of("<masked>"), "not a whole number"));
        assertThat(ConfigValues.read(List.of(secret), Map.of("test.secret", "x")).problems()).extracting(ConfigProblem::message)
                .containsExactly("Invalid value <masked> for configuration test.secret: not a whole number");
        assertThat(ConfigValues.read(List.of(secret), Map.of()).problems()).extracting(ConfigProblem::message)
                .containsExactly("Missing required configuration test.secret: A secret number.");
    }

    @Test
    void topicRoutingIsForKafkaConnectOnly()
    {
        assertThat(SinkConfig.problems(Map.of("target.url", "jdbc:postgresql://h/d", "target.table.name.format", "raw.${topic}"))).extracting(ConfigProblem::message).containsExactly(
                "Invalid value 'raw.${topic}' for configuration target.table.name.format: ${topic} is the Kafka topic of a record, which only the Kafka Connect sink reads; route by ${schema} and ${table}");
    }

    @Test
    void tableNameFormats()
    {
        TableId source = TableId.of("Sales", "Order.Lines");
        assertThat(TableNameFormat.parse("${table}").targetOf(source)).isEqualTo(TableId.of("Sales", "Order.Lines"));
        assertThat(TableNameFormat.parse("raw.${table}").targetOf(source)).isEqualTo(TableId.of("raw", "Order.Lines"));
        assertThat(TableNameFormat.parse("${schema}.cdc_${table}_v1").targetOf(source)).isEqualTo(TableId.of("Sales", "cdc_Order.Lines_v1"));
        assertThatThrownBy(() -> TableNameFormat.parse(".${table}")).hasMessageContaining("schema part");
        assertThatThrownBy(() -> TableNameFormat.parse("x.")).hasMessageContaining("table part is empty");
        assertThatThrownBy(() -> TableNameFormat.parse("${table")).hasMessageContaining("unclosed placeholder");
    }

    @Test
    void copyFormatRules()
    {
        assertThat(CopyFormat.problems(',', '"', '"', "")).isEmpty();
        assertThat(CopyFormat.problems('\n', '"', '"', "")).containsExactly("delimiter must not be CR or LF");
        assertThat(CopyFormat.problems(',', 'é', '"', "")).containsExactly("quote must be a single-byte ASCII character other than NUL, got U+00E9");
        assertThat(CopyFormat.problems(',', '"', ',', "")).containsExactly("delimiter and escape must differ, both are ','");
        assertThat(CopyFormat.problems(',', '"', '"', "a\"")).containsExactly("the NULL string must not contain the quote '\"'");
        assertThatThrownBy(() -> new CopyFormat(',', ',', '"', "", NulCharacterHandling.FAIL)).isInstanceOf(SinkException.class);
    }
}
