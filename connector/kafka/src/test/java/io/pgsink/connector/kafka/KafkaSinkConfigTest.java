package io.pgsink.connector.kafka;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KafkaSinkConfigTest
{
    /** A connector configuration as Kafka Connect hands it over: its own keys among pgsink's. */
    private static Map<String, String> connectorConfig()
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("name", "shop-to-warehouse");
        properties.put("connector.class", PgsinkSinkConnector.class.getName());
        properties.put("tasks.max", "3");
        properties.put("tasks.max.enforce", "true");
        properties.put("topics.regex", "shop\\..*");
        properties.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        properties.put("key.converter.schemas.enable", "true");
        properties.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        properties.put("value.converter.schemas.enable", "true");
        properties.put("value.converter.replace.null.with.default", "false");
        properties.put("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter");
        properties.put("transforms", "unwrap");
        properties.put("transforms.unwrap.type", "io.debezium.transforms.ExtractNewRecordState");
        properties.put("predicates", "");
        properties.put("errors.tolerance", "all");
        properties.put("errors.deadletterqueue.topic.name", "dlq");
        properties.put("errors.log.enable", "true");
        properties.put("consumer.override.max.poll.records", "2000");
        properties.put("config.action.reload", "restart");
        properties.put("task.class", PgsinkSinkTask.class.getName());
        properties.put("target.url", "jdbc:postgresql://warehouse:5432/dw");
        properties.put("target.password", "s3cret");
        properties.put("target.jdbc.sslmode", "verify-full");
        return properties;
    }

    @Test
    void readsSinkKeysAndLeavesConnectKeysToConnect()
    {
        Map<String, String> properties = connectorConfig();
        properties.put("flush.max.events", "500");
        properties.put("target.table.name.format", "dw.${topic}");
        properties.put("delete.on.tombstone", "true");
        KafkaSinkConfig config = KafkaSinkConfig.parse(properties);

        assertThat(config.sinkName()).isEqualTo("shop-to-warehouse");
        assertThat(config.sink().flushPolicy().maxEvents()).isEqualTo(500);
        assertThat(config.sink().toleratesRejectedRows()).isTrue();
        assertThat(config.sink().targetJdbcProperties()).isEqualTo(Map.of("sslmode", "verify-full"));
        assertThat(config.deleteOnTombstone()).isTrue();
        assertThat(config.metadataPrefix()).isEqualTo("__");
        assertThat(config.placeholder().text()).isEqualTo("__debezium_unavailable_value");
        assertThat(config.sink().retryBackoff().maxMillis()).isEqualTo(30_000);
        assertThat(config.routing().route("shop.public.orders", null)).isEqualTo(TableId.of("dw", "shop_public_orders"));
        // the core sink gets events routed already
        assertThat(config.sink().tableNameFormat().targetOf(TableId.of("dw", "x"))).isEqualTo(TableId.of("dw", "x"));
        assertThat(config.describe()).containsEntry("target.password", "<masked>").containsEntry("target.table.name.format", "'dw.${topic}'");
    }

    @Test
    void sinkNameDefaultsToTheConnectorName()
    {
        Map<String, String> properties = connectorConfig();
        properties.put("sink.name", "");
        assertThat(KafkaSinkConfig.parse(properties).sinkName()).isEqualTo("shop-to-warehouse");
        properties.put("sink.name", "dw-sink");
        assertThat(KafkaSinkConfig.parse(properties).sinkName()).isEqualTo("dw-sink");
        properties.remove("sink.name");
        properties.remove("name");
        assertThat(KafkaSinkConfig.parse(properties).sinkName()).isEqualTo("pgsink");
    }

    @Test
    void reportsEveryProblemAtOnce()
    {
        Map<String, String> properties = connectorConfig();
        properties.remove("target.url");
        properties.put("flush.max.event", "10");
        properties.put("flush.interval.ms", "soon");
        properties.put("target.table.name.format", "${db}.${table}");
        properties.put("delete.on.tombstone", "yes");
        properties.put("retry.backoff.max.ms", "0");
        properties.put("flattened.metadata.prefix", "");

        assertThatThrownBy(() -> KafkaSinkConfig.parse(properties))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid pgsink connector configuration (7 problems):\n  ")
                .hasMessageContaining("\n  Unknown configuration flush.max.event: not a setting of pgsink (sink.name, target.url, ")
                .hasMessageContaining("\n  Invalid value '${db}.${table}' for configuration target.table.name.format: unknown placeholder ${db}; use ${topic}, ")
                .hasMessageContaining("\n  Missing required configuration target.url: ")
                .hasMessageContaining("\n  Invalid value 'soon' for configuration flush.interval.ms: not a whole number")
                .hasMessageContaining("\n  Invalid value 'yes' for configuration delete.on.tombstone: must be one of false, true")
                .hasMessageContaining("\n  Invalid value '' for configuration flattened.metadata.prefix: must not be empty")
                .hasMessageContaining("\n  Invalid value '0' for configuration retry.backoff.max.ms: must be at least 1")
                .hasMessageNotContaining("s3cret");
    }

    @Test
    void debeziumJsonFormatNeedsConvertersThatHandOverBytes()
    {
        Map<String, String> properties = connectorConfig();
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.CONNECT);
        properties.put("record.format", "debezium-json");
        assertThatThrownBy(() -> KafkaSinkConfig.parse(properties))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("Invalid pgsink connector configuration (2 problems):\n  ")
                .hasMessageContaining("\n  Invalid value 'org.apache.kafka.connect.json.JsonConverter' for configuration key.converter: record.format=debezium-json reads the bytes of the records "
                        + "itself: the converter must be org.apache.kafka.connect.converters.ByteArrayConverter or org.apache.kafka.connect.storage.StringConverter")
                .hasMessageContaining("\n  Invalid value 'org.apache.kafka.connect.json.JsonConverter' for configuration value.converter: ");

        properties.put("key.converter", "org.apache.kafka.connect.storage.StringConverter");
        properties.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.DEBEZIUM_JSON);
        // the worker's converters, which a connector does not see, are checked on the first record
        properties.remove("key.converter");
        properties.remove("value.converter");
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.DEBEZIUM_JSON);

        properties.put("record.format", "json");
        assertThatThrownBy(() -> KafkaSinkConfig.parse(properties))
                .hasMessageContaining("Invalid value 'json' for configuration record.format: must be one of connect, debezium-json");
    }

    @Test
    void jsonConverterMustKeepNullsNull()
    {
        Map<String, String> properties = connectorConfig();
        properties.remove("value.converter.replace.null.with.default");
        assertThatThrownBy(() -> KafkaSinkConfig.parse(properties))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("Missing required configuration value.converter.replace.null.with.default")
                .hasMessageContaining("must be false with org.apache.kafka.connect.json.JsonConverter, which otherwise reads a NULL of a column that has a default as the default");
        properties.put("value.converter.replace.null.with.default", "true");
        assertThatThrownBy(() -> KafkaSinkConfig.parse(properties))
                .hasMessageContaining("Invalid value 'true' for configuration value.converter.replace.null.with.default: must be false");
        properties.put("value.converter.replace.null.with.default", " FALSE ");
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.CONNECT);
        // another converter, or the worker's (which a connector does not see), is not checked
        properties.remove("value.converter.replace.null.with.default");
        properties.put("value.converter", "io.confluent.connect.avro.AvroConverter");
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.CONNECT);
        properties.remove("value.converter");
        assertThat(KafkaSinkConfig.parse(properties).recordFormat()).isEqualTo(RecordFormat.CONNECT);
    }

    @Test
    void configDefDocumentsEveryKey()
    {
        ConfigDef definition = KafkaSinkConfig.CONFIG_DEF;
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            assertThat(definition.configKeys()).containsKey(key.name());
            assertThat(definition.configKeys().get(key.name()).documentation).isNotBlank();
        }
        for (ConfigKey<?> key : KafkaSinkConfig.KEYS) {
            assertThat(definition.configKeys()).containsKey(key.name());
        }
        assertThat(definition.configKeys()).hasSize(SinkConfig.KEYS.size() + KafkaSinkConfig.KEYS.size());
        assertThat(definition.configKeys().get("target.url").defaultValue).isEqualTo(ConfigDef.NO_DEFAULT_VALUE);
        assertThat(definition.configKeys().get("target.url").importance).isEqualTo(ConfigDef.Importance.HIGH);
        assertThat(definition.configKeys().get("target.password").type).isEqualTo(ConfigDef.Type.PASSWORD);
        assertThat(definition.configKeys().get("flush.max.events").type).isEqualTo(ConfigDef.Type.LONG);
        assertThat(definition.configKeys().get("flush.max.events").defaultValue).isEqualTo(10_000L);
        assertThat(definition.configKeys().get("sink.name").documentation).contains("connector's name");
        assertThat(definition.configKeys().get("target.table.name.format").documentation).contains("${topic}");
    }

    /** What {@link PgsinkSinkConnector#validate} says, by key, for the keys it finds wrong. */
    static Map<String, List<String>> validationErrors(Map<String, String> properties)
    {
        Config result = new PgsinkSinkConnector().validate(properties);
        Map<String, List<String>> errors = new HashMap<>();
        for (ConfigValue value : result.configValues()) {
            if (!value.errorMessages().isEmpty()) {
                errors.put(value.name(), value.errorMessages());
            }
        }
        return errors;
    }

    @Test
    void validateAttachesProblemsToTheirKeys()
    {
        Map<String, String> properties = connectorConfig();
        properties.put("flush.max.event", "10");
        properties.put("target.table.name.format", "${db}");
        properties.put("buffer.max.bytes", "lots");
        properties.put("copy.quote", "''");
        Map<String, List<String>> errors = validationErrors(properties);
        assertThat(errors).containsOnlyKeys("flush.max.event", "target.table.name.format", "buffer.max.bytes", "copy.quote");
        assertThat(errors.get("flush.max.event")).singleElement().asString().startsWith("Unknown configuration flush.max.event");
        assertThat(errors.get("target.table.name.format")).singleElement().asString().startsWith("Invalid value '${db}' for configuration target.table.name.format: unknown placeholder ${db}");
        // Connect's own check of the type comes first; pgsink's says the same and is not repeated
        assertThat(errors.get("buffer.max.bytes")).first().asString().isEqualTo("Invalid value lots for configuration buffer.max.bytes: Not a number of type LONG");
        assertThat(errors.get("buffer.max.bytes")).noneMatch(message -> message.contains("not a whole number"));
        assertThat(errors.get("copy.quote")).singleElement().asString().isEqualTo("Invalid value '''' for configuration copy.quote: must be exactly one character");

        // a valid configuration is then checked against the target: one that cannot be reached is one problem, on target.url
        Map<String, String> unreachable = connectorConfig();
        unreachable.put("target.url", "jdbc:postgresql://127.0.0.1:1/dw?connectTimeout=1");
        Map<String, List<String>> targetErrors = validationErrors(unreachable);
        assertThat(targetErrors).containsOnlyKeys("target.url");
        assertThat(targetErrors.get("target.url")).singleElement().asString().startsWith("cannot connect or query: ").contains("(SQLState 08001)").doesNotContain("s3cret");
    }

    /** The connector's own keys, with type and default, and the shared keys that read differently here. */
    @Test
    void keyTable()
    {
        Map<String, String> table = new LinkedHashMap<>();
        for (ConfigKey<?> key : KafkaSinkConfig.KEYS) {
            table.put(key.name(), key.type().kind() + " " + key.defaultValue().map(value -> "'" + value + "'").orElse("(required)"));
        }
        assertThat(table).containsExactly(
                Map.entry("delete.on.tombstone", "BOOLEAN 'false'"),
                Map.entry("flattened.metadata.prefix", "STRING '__'"),
                Map.entry("unavailable.value.placeholder", "STRING '__debezium_unavailable_value'"),
                Map.entry("key.change.wait.ms", "LONG '30000'"),
                Map.entry("record.format", "CHOICE 'connect'"));
        List<String> differing = new ArrayList<>();
        for (int i = 0; i < SinkConfig.KEYS.size(); i++) {
            if (!KafkaSinkConfig.CONNECT_KEYS.get(i).equals(SinkConfig.KEYS.get(i))) {
                differing.add(KafkaSinkConfig.CONNECT_KEYS.get(i).name());
            }
        }
        assertThat(differing).containsExactly("sink.name", "target.table.name.format");
        assertThat(KafkaSinkConfig.CONNECT_KEYS).hasSize(SinkConfig.KEYS.size() + KafkaSinkConfig.KEYS.size());
    }

    @Test
    void validateReportsOneProblemPerKey()
    {
        Map<String, String> properties = connectorConfig();
        properties.put("flush.max.events", "abc");
        properties.put("retry.backoff.max.ms", "0");
        properties.put("delete.on.tombstone", "yes");
        Map<String, List<String>> errors = validationErrors(properties);
        assertThat(errors).containsOnlyKeys("flush.max.events", "retry.backoff.max.ms", "delete.on.tombstone");
        // Connect cannot parse it and says so; no second "Invalid value null ... must be non-null"
        assertThat(errors.get("flush.max.events")).containsExactly("Invalid value abc for configuration flush.max.events: Not a number of type LONG");
        assertThat(errors.get("retry.backoff.max.ms")).containsExactly("Invalid value '0' for configuration retry.backoff.max.ms: must be at least 1");
        assertThat(errors.get("delete.on.tombstone")).containsExactly("Invalid value 'yes' for configuration delete.on.tombstone: must be one of false, true");
    }

    @Test
    void configDefChecksWhatTheParserChecks()
    {
        ConfigDef definition = KafkaSinkConfig.CONFIG_DEF;
        assertThat(definition.configKeys().get("target.dialect").validator).hasToString("[auto, postgresql, greenplum]");
        assertThat(definition.configKeys().get("copy.nul.character").validator).hasToString("[fail, strip]");
        assertThat(definition.configKeys().get("delete.on.tombstone").defaultValue).isEqualTo("false");
        assertThat(definition.configKeys().get("retry.backoff.max.ms").defaultValue).isEqualTo(30_000L);
        assertThat(definition.configKeys().get("sink.name").defaultValue).isEqualTo("");
        // ${topic} routes Kafka records: valid here, though not for the core sink
        definition.configKeys().get("target.table.name.format").validator.ensureValid("target.table.name.format", "raw.${topic}");
        assertThatThrownBy(() -> definition.configKeys().get("target.table.name.format").validator.ensureValid("target.table.name.format", "${db}"))
                .isInstanceOf(ConfigException.class)
                .hasMessage("Invalid value '${db}' for configuration target.table.name.format: unknown placeholder ${db}; use ${topic}, ${source.schema} (or ${schema}) and ${source.table} (or ${table})");
    }

    @Test
    void everyTaskGetsTheConfigurationWithTheSinkName()
    {
        PgsinkSinkConnector connector = new PgsinkSinkConnector();
        Map<String, String> properties = connectorConfig();
        // an unreachable target is not a connector failure: the tasks retry
        properties.put("target.url", "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=1");
        connector.start(properties);
        List<Map<String, String>> tasks = connector.taskConfigs(3);
        assertThat(tasks).hasSize(3).allSatisfy(task -> assertThat(task).containsEntry("sink.name", "shop-to-warehouse").containsEntry("target.url", properties.get("target.url")));
        assertThat(connector.taskClass()).isEqualTo(PgsinkSinkTask.class);
        connector.stop();
    }
}
