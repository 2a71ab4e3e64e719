package io.pgsink.connector.kafka;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.copy.testing.TestingSchema;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.awaitility.core.ConditionFactory;
import org.jetbrains.annotations.Nullable;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka Connect workers as processes of their own ({@code ConnectDistributed}), the way users run
 * them: Kafka Connect's jars on the class path and the connectors only on the {@code plugin.path},
 * pgsink's unzipped from the plugin archive the build makes ({@code target/pgsink-kafka-connect-*.zip}).
 * Workers of one instance form one group and talk REST on a free local port each.
 */
final class ConnectWorkerProcesses
        implements AutoCloseable
{
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final ObjectMapper json = new ObjectMapper();
    private final List<Process> processes = new ArrayList<>();
    private final EmbeddedKafkaCluster kafka;
    private final Path buildDirectory;
    private final String group;
    private final List<Path> pluginPath;
    private boolean ownsKafka;

    /**
     * @param group the worker group, also the prefix of its storage topics and of the files (properties, log) in the build directory
     * @param pluginPath the directories of the workers' plugin.path (see {@link #installPgsinkPlugin})
     */
    ConnectWorkerProcesses(EmbeddedKafkaCluster kafka, Path buildDirectory, String group, List<Path> pluginPath)
    {
        this.kafka = kafka;
        this.buildDirectory = buildDirectory;
        this.group = group;
        this.pluginPath = List.copyOf(pluginPath);
    }

    /**
     * Workers of {@code group} with pgsink's plugin installed from this build, on a one-broker Kafka
     * cluster of their own that {@link #close()} stops after them.
     */
    static ConnectWorkerProcesses withOwnKafka(String group)
            throws IOException
    {
        Path buildDirectory = buildDirectory();
        Path pluginPath = installPgsinkPlugin(buildDirectory);
        EmbeddedKafkaCluster kafka = new EmbeddedKafkaCluster(1, new Properties());
        kafka.start();
        ConnectWorkerProcesses workers = new ConnectWorkerProcesses(kafka, buildDirectory, group, List.of(pluginPath));
        workers.ownsKafka = true;
        return workers;
    }

    EmbeddedKafkaCluster kafka()
    {
        return kafka;
    }

    /**
     * Worker settings for tests that kill workers: Kafka's committed offsets lag the target by
     * seconds (a worker killed in between leaves them behind it), and a dead worker's tasks and
     * partitions go to the new one quickly.
     */
    static Map<String, String> failoverSettings()
    {
        return Map.of("offset.flush.interval.ms", "4000", "session.timeout.ms", "6000", "heartbeat.interval.ms",
                "1000", "scheduled.rebalance.max.delay.ms", "0",
                "consumer.session.timeout.ms", "6000", "consumer.heartbeat.interval.ms", "1000");
    }

    /**
     * A pgsink connector reading {@code topics} of Debezium envelopes written by JsonConverter with
     * schemas, into {@code schema} (tables named as the source's, positions there too), with two tasks.
     */
    static Map<String, String> jsonConnector(TestingSchema schema, String topics)
    {
        Map<String, String> config = TestingConnector.properties(schema, topics);
        config.put("tasks.max", "2");
        config.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("key.converter.schemas.enable", "true");
        config.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        config.put("value.converter.schemas.enable", "true");
        config.put("value.converter.replace.null.with.default", "false");
        return config;
    }

    /** The module's build directory, which failsafe names in PGSINK_TEST_BUILD_DIRECTORY. */
    static Path buildDirectory()
    {
        return Paths.get(System.getenv().getOrDefault("PGSINK_TEST_BUILD_DIRECTORY", "target")).toAbsolutePath();
    }

    /** Unzips the plugin archive as a user would, into a new directory for a worker's plugin.path. */
    static Path installPgsinkPlugin(Path buildDirectory)
            throws IOException
    {
        Path archive;
        try (Stream<Path> files = Files.list(buildDirectory)) {
            archive = files.filter(file -> file.getFileName().toString().matches("pgsink-kafka-connect-.*\\.zip")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("No plugin archive pgsink-kafka-connect-*.zip in " + buildDirectory + ": run mvn package (or verify) first"));
        }
        Path plugins = Files.createTempDirectory(buildDirectory, "connect-plugins");
        try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(archive))) {
            for (ZipEntry entry = zip.getNextEntry(); entry != null; entry = zip.getNextEntry()) {
                Path target = plugins.resolve(entry.getName()).normalize();
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                }
                else {
                    Files.createDirectories(target.getParent());
                    Files.copy(zip, target);
                }
            }
        }
        return plugins;
    }

    /** The worker's class path: Kafka Connect and its dependencies, without pgsink, its driver or Debezium, which only the plugins may bring. */
    private String workerClassPath()
    {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        // the project's own classes and jars (failsafe puts the module's jar there, and the reactor the other modules')
        String project = buildDirectory.getParent().getParent().toString().replace('\\', '/') + "/";
        List<String> kept = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            String path = Paths.get(entry).toAbsolutePath().toString().replace('\\', '/');
            if (path.startsWith(project) || path.contains("/io/pgsink/") || path.contains("/org/postgresql/")
                    || path.contains("/io/debezium/") || path.contains("/io/zonky/") || path.contains("/org/testcontainers/") || path.contains("/kafka_2.13/")) {
                continue;
            }
            kept.add(entry);
        }
        return String.join(File.pathSeparator, kept);
    }

    /**
     * Starts a worker process; returns once it answers REST.
     *
     * @param settings worker settings beyond the group's (they win)
     * @param jvmOptions options of the worker's JVM beyond the class path
     * @return the worker's REST port
     */
    int start(String name, Map<String, String> settings, List<String> jvmOptions, ConditionFactory await)
            throws IOException
    {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Properties worker = new Properties();
        worker.setProperty("bootstrap.servers", kafka.bootstrapServers());
        worker.setProperty("group.id", group);
        worker.setProperty("config.storage.topic", group + "-configs");
        worker.setProperty("offset.storage.topic", group + "-offsets");
        worker.setProperty("status.storage.topic", group + "-status");
        worker.setProperty("config.storage.replication.factor", "1");
        worker.setProperty("offset.storage.replication.factor", "1");
        worker.setProperty("status.storage.replication.factor", "1");
        worker.setProperty("offset.storage.partitions", "1");
        worker.setProperty("status.storage.partitions", "1");
        worker.setProperty("key.converter", "org.apache.kafka.connect.json.JsonConverter");
        worker.setProperty("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        // a source NULL stays NULL in the JSON, where the column has a default too
        worker.setProperty("value.converter.replace.null.with.default", "false");
        worker.setProperty("listeners", "http://127.0.0.1:" + port);
        worker.setProperty("plugin.path", pluginPath.stream().map(Path::toString).collect(Collectors.joining(",")));
        worker.setProperty("plugin.discovery", "service_load");
        settings.forEach(worker::setProperty);
        Path properties = buildDirectory.resolve(group + "-" + name + ".properties");
        try (OutputStream out = Files.newOutputStream(properties)) {
            worker.store(out, "pgsink " + group + " worker " + name);
        }
        Path logFile = buildDirectory.resolve(group + "-" + name + ".log");
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.log.org.apache.kafka=warn", "-Dorg.slf4j.simpleLogger.log.io.pgsink=info",
                "-cp", workerClassPath(), "org.apache.kafka.connect.cli.ConnectDistributed", properties.toString()));
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile())
                .start();
        processes.add(process);
        await.untilAsserted(() -> {
            if (!process.isAlive()) {
                // not an AssertionError: stops the wait at once
                throw new IllegalStateException("worker process exited (see " + logFile + ")");
            }
            assertThat(get(port, "/connector-plugins")).isNotNull();
        });
        return port;
    }

    /** The process of the worker started last. */
    Process last()
    {
        return processes.get(processes.size() - 1);
    }

    /** Kills the worker started last (SIGKILL) and waits for it to end. */
    void killLast()
            throws InterruptedException
    {
        last().destroyForcibly().waitFor();
    }

    void createConnector(int port, String name, Map<String, String> config)
            throws IOException, InterruptedException
    {
        String body = json.writeValueAsString(Map.of("name", name, "config", config));
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/connectors"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
    }

    void deleteConnector(int port, String name)
            throws IOException, InterruptedException
    {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/connectors/" + name)).DELETE().build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(204);
    }

    /** Waits until the connector and exactly this many tasks run; a failed task ends the wait at once. */
    void awaitRunning(int port, String connector, int tasks, ConditionFactory await)
    {
        await.untilAsserted(() -> {
            String body = get(port, "/connectors/" + connector + "/status");
            assertThat(body).isNotNull();
            JsonNode status = json.readTree(body);
            for (JsonNode task : status.path("tasks")) {
                if (task.path("state").asText().equals("FAILED")) {
                    throw new IllegalStateException("a task failed: " + body);
                }
            }
            assertThat(status.path("connector").path("state").asText()).as(body).isEqualTo("RUNNING");
            assertThat(status.path("tasks")).as(body).hasSize(tasks).allSatisfy(task -> assertThat(task.path("state").asText()).isEqualTo("RUNNING"));
        });
    }

    /** A REST resource's body, or null while the worker does not answer it with 200. */
    @Nullable
    String get(int port, String path)
            throws InterruptedException
    {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(5)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : null;
        }
        catch (IOException e) {
            return null;
        }
    }

    @Override
    public void close()
            throws InterruptedException
    {
        for (Process process : processes) {
            process.destroyForcibly().waitFor();
        }
        if (ownsKafka) {
            kafka.stop();
        }
    }
}
