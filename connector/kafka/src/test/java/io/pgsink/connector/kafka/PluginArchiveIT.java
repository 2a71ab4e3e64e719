package io.pgsink.connector.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The plugin archive {@code target/pgsink-kafka-connect-<version>.zip} has the layout Confluent Hub
 * installs ({@code <name>-<version>/manifest.json}, {@code lib/}, {@code etc/}, {@code doc/}), and its
 * manifest claims exactly the versions the tests run against: the properties
 * {@code pgsink.tested.*} of the parent pom, the one place that says what is tested.
 */
class PluginArchiveIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String VERSION = System.getProperty("pgsink.version", "0.1.0-SNAPSHOT");
    private static final String BASE = "pgsink-kafka-connect-" + VERSION + "/";

    @Test
    void hasTheConfluentHubLayout()
            throws IOException
    {
        Set<String> names = new TreeSet<>();
        try (ZipFile zip = new ZipFile(archive().toFile())) {
            zip.stream().filter(entry -> !entry.isDirectory()).forEach(entry -> names.add(entry.getName()));
        }
        assertThat(names).allMatch(name -> name.startsWith(BASE));
        List<String> relative = names.stream().map(name -> name.substring(BASE.length())).toList();
        assertThat(relative).contains("manifest.json", "etc/pgsink-sink.json",
                "doc/README.md", "doc/LICENSE", "doc/NOTICE",
                "lib/connector-kafka-" + VERSION + ".jar", "lib/sink-core-" + VERSION + ".jar");
        assertThat(relative).anyMatch(name -> name.matches("lib/postgresql-[0-9.]+\\.jar"));
        assertThat(relative).as("only the manifest at the top; jars in lib/, configurations in etc/, docs in doc/")
                .allMatch(name -> name.equals("manifest.json") || name.startsWith("lib/") && name.endsWith(".jar")
                        || name.startsWith("etc/") || name.startsWith("doc/"));
        assertThat(relative).as("Kafka's and slf4j's jars come from the worker")
                .noneMatch(name -> name.matches("lib/(kafka-clients|connect-api|slf4j-).*"));
    }

    @Test
    void theManifestClaimsOnlyWhatIsTested()
            throws IOException
    {
        JsonNode manifest;
        try (ZipFile zip = new ZipFile(archive().toFile())) {
            ZipEntry entry = zip.getEntry(BASE + "manifest.json");
            assertThat(entry).as("manifest.json").isNotNull();
            manifest = JSON.readTree(zip.getInputStream(entry));
        }
        assertThat(manifest.path("name").asText()).isEqualTo("pgsink");
        assertThat(manifest.path("version").asText()).isEqualTo(VERSION);
        assertThat(manifest.path("connector_class").asText()).isEqualTo(PgsinkSinkConnector.class.getName());
        assertThat(manifest.path("component_types").get(0).asText()).isEqualTo("sink");
        List<String> requirements = new ArrayList<>();
        manifest.path("requirements").forEach(requirement -> requirements.add(requirement.asText()));
        assertThat(requirements).containsExactly(
                "Kafka Connect " + System.getProperty("pgsink.tested.kafka-connect") + " (Java 17)",
                "PostgreSQL " + System.getProperty("pgsink.tested.postgresql"));
        assertThat(manifest.toString()).as("every ${...} of the template is filled in").doesNotContain("${");
    }

    private static Path archive()
    {
        Path archive = ConnectWorkerProcesses.buildDirectory().resolve("pgsink-kafka-connect-" + VERSION + ".zip");
        assertThat(archive).as("the plugin archive (mvn package builds it)").isRegularFile();
        return archive;
    }
}
