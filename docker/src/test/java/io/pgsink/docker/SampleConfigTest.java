package io.pgsink.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.debezium.config.Configuration;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.pgsink.connector.kafka.KafkaSinkConfig;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample configurations of {@code docker/config} are valid for the parsers that will read
 * them (the standalone service's, the Kafka Connect sink's, Debezium's) and fit the compose stack:
 * the hosts they name are its services, the ports its ports, and the sink reads the topics the
 * source writes.
 */
class SampleConfigTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ComposeStack stack = ComposeStack.load();

    @Test
    void standaloneConfigurationsParseWithTheirServicesEnvironment()
    {
        for (String service : List.of("pgsink", "pgsink-greenplum")) {
            JsonNode definition = stack.service(service);
            String mount = ComposeStack.strings(definition.path("volumes")).stream().filter(volume -> volume.contains(":/etc/pgsink/pgsink.properties")).findFirst().orElseThrow();
            Path file = ComposeStack.DIRECTORY.resolve(mount.substring(0, mount.indexOf(':'))).normalize();

            StandaloneConfig config = StandaloneConfig.load(file, ComposeStack.environment(definition));

            String source = config.debezium().get("database.hostname");
            assertThat(stack.services()).as("source host of %s", file).containsKey(source);
            assertThat(String.join(" ", ComposeStack.strings(stack.service(source).path("command")))).contains("wal_level=logical");
            assertThat(ComposeStack.environment(stack.service(source))).containsEntry("POSTGRES_DB", config.debezium().get("database.dbname"));
            assertThat(config.debezium().get("database.password")).as("password from the environment").isNotBlank();

            URI target = URI.create(config.sink().targetUrl().substring("jdbc:".length()));
            assertThat(stack.services()).as("target host of %s", file).containsKey(target.getHost());
            assertThat(ComposeStack.strings(definition.path("ports"))).anyMatch(port -> port.endsWith(":" + config.httpPort()));
            assertThat(ComposeStack.dependencies(definition)).contains(source, target.getHost());
            assertThat(config.sink().targetPassword()).isPresent();
        }
    }

    /** pgsink listens on the loopback interface by default; the image makes it every interface, for the port to work. */
    @Test
    void theImageServesTheHttpEndpointOnEveryInterface()
            throws IOException
    {
        Map<String, String> environment = new TreeMap<>();
        Path dockerfile = ComposeStack.DIRECTORY.resolve("pgsink/Dockerfile");
        for (DockerfileInstructions.Instruction instruction : DockerfileInstructions.read(dockerfile)) {
            if (instruction.keyword().equals("ENV")) {
                String[] assignment = instruction.arguments().split("=", 2);
                environment.put(assignment[0].strip(), assignment[1].strip());
            }
        }
        JsonNode definition = stack.service("pgsink");
        environment.putAll(ComposeStack.environment(definition));
        Path file = ComposeStack.DIRECTORY.resolve("config/pgsink.properties");
        assertThat(StandaloneConfig.load(file, environment).httpHost()).isEqualTo("0.0.0.0");
        assertThat(StandaloneConfig.load(file, ComposeStack.environment(definition)).httpHost())
                .as("without the image's environment").isEqualTo("127.0.0.1");
    }

    @Test
    void theTwoStandaloneServicesHaveSlotsOfTheirOwn()
    {
        List<String> slots = new ArrayList<>();
        for (String service : List.of("pgsink", "pgsink-greenplum")) {
            JsonNode definition = stack.service(service);
            String mount = ComposeStack.strings(definition.path("volumes")).stream().filter(volume -> volume.contains(":/etc/pgsink/pgsink.properties")).findFirst().orElseThrow();
            StandaloneConfig config = StandaloneConfig.load(ComposeStack.DIRECTORY.resolve(mount.substring(0, mount.indexOf(':'))), ComposeStack.environment(definition));
            slots.add(config.debezium().get("slot.name"));
        }
        slots.add(connector("debezium-source-connector.json").path("config").path("slot.name").asText());
        assertThat(slots).doesNotHaveDuplicates().doesNotContain("");
    }

    @Test
    void kafkaConnectSinkConfigurationParsesAndReadsTheSourcesTopics()
    {
        JsonNode sink = connector("pgsink-sink-connector.json");
        Map<String, String> config = strings(sink.path("config"));
        config.put("name", sink.path("name").asText());

        KafkaSinkConfig parsed = KafkaSinkConfig.parse(config);

        assertThat(config.get("connector.class")).isEqualTo(io.pgsink.connector.kafka.PgsinkSinkConnector.class.getName());
        URI target = URI.create(parsed.sink().targetUrl().substring("jdbc:".length()));
        assertThat(stack.services()).containsKey(target.getHost());
        // records reach the core sink routed already; the format reads as the shared key does
        SinkConfig routing = SinkConfig.parse(Map.of(SinkConfig.TARGET_URL, parsed.sink().targetUrl(), SinkConfig.TARGET_TABLE_NAME_FORMAT, config.get(SinkConfig.TARGET_TABLE_NAME_FORMAT)));
        assertThat(routing.tableNameFormat().targetOf(TableId.of("public", "orders"))).isEqualTo(TableId.of("kafka", "orders"));

        // the sink subscribes to the topics the Debezium source writes: <topic.prefix>.<schema>.<table>
        Map<String, String> source = strings(connector("debezium-source-connector.json").path("config"));
        Pattern topics = Pattern.compile(config.get("topics.regex"));
        for (String table : source.get("table.include.list").split(",")) {
            assertThat(topics.matcher(source.get("topic.prefix") + "." + table).matches()).as("topic of %s", table).isTrue();
        }
        // the converters agree: the sink reads as bytes the JSON with schemas that the source writes
        assertThat(config.get("record.format")).isEqualTo("debezium-json");
        for (String side : List.of("key", "value")) {
            assertThat(config.get(side + ".converter")).as(side + ".converter")
                    .isEqualTo("org.apache.kafka.connect.converters.ByteArrayConverter");
            assertThat(source.get(side + ".converter")).as("source " + side + ".converter")
                    .isEqualTo("org.apache.kafka.connect.json.JsonConverter");
            assertThat(source.get(side + ".converter.schemas.enable")).as("source " + side + ".converter.schemas.enable")
                    .isEqualTo("true");
        }
    }

    @Test
    void debeziumSourceConfigurationIsValid()
    {
        JsonNode connector = connector("debezium-source-connector.json");
        Map<String, String> config = strings(connector.path("config"));
        config.put("name", connector.path("name").asText());
        List<String> problems = new ArrayList<>();
        Configuration.from(config).validateAndRecord(PostgresConnectorConfig.ALL_FIELDS, problems::add);
        assertThat(problems).isEmpty();
        assertThat(config.get("connector.class")).isEqualTo(io.debezium.connector.postgresql.PostgresConnector.class.getName());
        assertThat(stack.services()).containsKey(config.get("database.hostname"));
        // the settings the standalone service chooses for lossless values, here spelled out
        assertThat(config).containsEntry("plugin.name", "pgoutput").containsEntry("decimal.handling.mode", "string").containsEntry("skipped.operations", "none")
                .containsEntry("column.propagate.source.type", ".*");
    }

    @Test
    void brokenConfigurationsAreCaught()
    {
        // the checks above would notice a misspelled key or an invalid value
        Map<String, String> sink = strings(connector("pgsink-sink-connector.json").path("config"));
        sink.put("name", "broken");
        sink.put("flush.max.event", "10");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> KafkaSinkConfig.parse(sink)).hasMessageContaining("flush.max.event");
        Map<String, String> source = strings(connector("debezium-source-connector.json").path("config"));
        source.put("decimal.handling.mode", "exact");
        List<String> problems = new ArrayList<>();
        Configuration.from(source).validateAndRecord(PostgresConnectorConfig.ALL_FIELDS, problems::add);
        assertThat(problems).anyMatch(problem -> problem.contains("decimal.handling.mode"));
    }

    private static JsonNode connector(String file)
    {
        try {
            return JSON.readTree(ComposeStack.DIRECTORY.resolve("config").resolve(file).toFile());
        }
        catch (IOException e) {
            throw new AssertionError("Cannot read docker/config/" + file, e);
        }
    }

    private static Map<String, String> strings(JsonNode object)
    {
        Map<String, String> strings = new TreeMap<>();
        object.fields().forEachRemaining(field -> {
            assertThat(field.getValue().isTextual()).as("%s is a string (Kafka Connect takes strings)", field.getKey()).isTrue();
            strings.put(field.getKey(), field.getValue().asText());
        });
        return strings;
    }
}
