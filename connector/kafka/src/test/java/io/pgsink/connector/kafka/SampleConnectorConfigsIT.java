package io.pgsink.connector.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every sample configuration of the sink that pgsink ships passes the connector's own
 * {@link PgsinkSinkConnector#validate}, as Connect's REST API runs it before creating a connector:
 * the plugin archive's {@code etc/} (from {@code src/kafka-connect}, see the assembly) and the
 * compose stack's {@code docker/config}. Their target is unreachable here, so {@code target.url},
 * {@code target.user} and {@code target.password} are the test server's; every other key is
 * validated as written.
 */
class SampleConnectorConfigsIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path PLUGIN_SAMPLES = Path.of("src", "kafka-connect");
    private static final Path DOCKER_SAMPLES = Path.of("..", "..", "docker", "config");

    @Test
    void everyShippedSinkSamplePassesValidate()
            throws IOException
    {
        List<Path> samples = new ArrayList<>();
        samples.addAll(sinkSamples(PLUGIN_SAMPLES));
        samples.addAll(sinkSamples(DOCKER_SAMPLES));
        assertThat(samples).as("sink samples").anyMatch(path -> path.startsWith(PLUGIN_SAMPLES)).anyMatch(path
                -> path.startsWith(DOCKER_SAMPLES));

        TestingPostgreSqlServer server = TestingPostgreSqlServer.get();
        for (Path sample : samples) {
            Map<String, String> config = config(sample);
            config.put("target.url", server.jdbcUrl());
            server.properties().forEach((key, value) -> config.put("target." + key, (String) value));

            assertThat(KafkaSinkConfigTest.validationErrors(config)).as("validate() of %s", sample).isEmpty();
        }
    }

    @Test
    void aSampleWithoutReplaceNullWithDefaultIsRefused()
            throws IOException
    {
        // what the packaged sample lacked until 2026-11-27, when it named JsonConverter: the test above would have
        // caught it
        Map<String, String> config = config(PLUGIN_SAMPLES.resolve("pgsink-sink.json"));
        config.remove("record.format");
        config.remove("header.converter");
        config.putAll(Map.of("key.converter", "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable",
                "true", "value.converter", "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable", "true"));

        assertThat(KafkaSinkConfigTest.validationErrors(config))
                .containsOnlyKeys("value.converter.replace.null.with.default");
    }

    /**
     * The files of {@code directory} that configure this connector (the archive ships every {@code *.json} but the
     * manifest).
     */
    private static List<Path> sinkSamples(Path directory)
            throws IOException
    {
        List<Path> samples = new ArrayList<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.sorted().toList()) {
                String name = file.getFileName().toString();
                if (name.endsWith(".json") && !name.equals("manifest.json")
                        && PgsinkSinkConnector.class.getName()
                                .equals(JSON.readTree(file.toFile()).path("config").path("connector.class").asText())) {
                    samples.add(file);
                }
            }
        }
        return samples;
    }

    /** The sample's {@code config} with its {@code name}, as Connect hands them to {@code validate}. */
    private static Map<String, String> config(Path sample)
            throws IOException
    {
        JsonNode connector = JSON.readTree(sample.toFile());
        Map<String, String> config = new TreeMap<>();
        connector.path("config").fields().forEachRemaining(field -> config.put(field.getKey(),
                field.getValue().asText()));
        config.put("name", connector.path("name").asText());
        return config;
    }
}
