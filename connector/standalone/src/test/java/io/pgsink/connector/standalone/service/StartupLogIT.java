package io.pgsink.connector.standalone.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.connector.standalone.cli.RunCommand;
import io.pgsink.connector.standalone.cli.TestingCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the runnable jar logs on its way to streaming, with the logging it ships: a few lines at
 * INFO (no Debezium or Kafka configuration dump, pgsink's own configuration on one line, the
 * password masked), and with {@code pgsink.log.format=json} one JSON object per line on standard
 * output.
 */
class StartupLogIT
{
    private static final String PASSWORD = "pw-" + Long.toHexString(System.nanoTime()) + "-masked";
    private static final String STREAMING = "streaming changes from";
    private static final String SUMMARY = "configuration, the keys not at their default";
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("startlog");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.items (id int PRIMARY KEY, name text)",
                "INSERT INTO public.items VALUES (1, 'one'), (2, 'two')");
        target.execute("CREATE TABLE public.items (id int PRIMARY KEY, name text)");
    }

    @Test
    void fewInfoLinesBeforeStreaming(@TempDir Path directory)
            throws Exception
    {
        Path log = directory.resolve("pgsink.log");
        List<String> lines = runUntilStreaming(writeConfig(directory), log, log);
        List<String> info = lines.stream().filter(line -> line.contains("[INFO]")).toList();
        String output = String.join("\n", lines);
        assertThat(info).as("INFO lines before streaming:%n%s", output).hasSizeLessThan(25);
        assertThat(info).filteredOn(line -> line.contains(SUMMARY)).as(output).singleElement()
                .satisfies(line -> assertThat(line).contains("source.database.password=<masked>",
                        "target.password=<masked>", "source.table.include.list='public.items'"));
        // Debezium's and Kafka's configuration dumps: "key = value" lines, "... values:" headers
        assertThat(lines).as(output).noneMatch(line -> line.matches("\\s+[a-z][a-z0-9._-]+ = .*"));
        // nor Debezium's dump of the source's roles
        assertThat(output).doesNotContain("[superuser: ");
        assertThat(output).doesNotContain("Starting PostgresConnectorTask with configuration",
                "ConnectorConfig values:", "EmbeddedWorkerConfig values");
        assertThat(output).doesNotContain(PASSWORD);
    }

    @Test
    void jsonFormatWritesOneObjectPerLineToStandardOutput(@TempDir Path directory)
            throws Exception
    {
        Path out = directory.resolve("pgsink.out");
        Path err = directory.resolve("pgsink.err");
        List<String> lines = runUntilStreaming(writeConfig(directory), out, err, "-Dpgsink.log.format=json");
        assertThat(lines).as("stderr: %s", Files.readString(err)).isNotEmpty();
        assertThat(Files.readString(err)).as("standard error").isEmpty();
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            JsonNode event = JSON.readTree(line);
            assertThat(event.isObject()).as(line).isTrue();
            assertThat(Instant.parse(event.path("time").asText())).as(line).isBefore(Instant.now());
            assertThat(event.path("level").asText()).as(line).isIn("ERROR", "WARN", "INFO");
            assertThat(event.path("logger").asText()).as(line).isNotEmpty();
            assertThat(event.has("thread")).as(line).isTrue();
            events.add(event);
        }
        assertThat(events).anySatisfy(event -> assertThat(event.path("message").asText())
                .contains(SUMMARY, "target.password=<masked>"));
        assertThat(events.get(events.size() - 1).path("logger").asText()).isEqualTo(StandaloneService.class.getName());
        assertThat(String.join("\n", lines)).doesNotContain(PASSWORD);
    }

    @Test
    void jsonFormatReportsAFailureThatStopsTheServiceAsAnErrorEvent(@TempDir Path directory)
            throws Exception
    {
        // a captured table without a target table (and no schema.evolution): the service stops, exit 1
        target.execute("DROP TABLE public.items");
        Path out = directory.resolve("pgsink.out");
        Path err = directory.resolve("pgsink.err");
        Process process = TestingCommand.startProcess(writeConfig(directory), out, err, "-Dpgsink.log.format=json");
        assertThat(process.waitFor(180, TimeUnit.SECONDS)).as("pgsink run stopped").isTrue();
        assertThat(process.exitValue()).as(Files.readString(err)).isEqualTo(1);
        String stderr = Files.readString(err).strip();
        assertThat(stderr).as("the line for people").startsWith("pgsink: ").contains("items");
        List<JsonNode> errors = new ArrayList<>();
        for (String line : Files.readAllLines(out)) {
            JsonNode event = JSON.readTree(line);
            if (event.path("level").asText().equals("ERROR")
                    && event.path("logger").asText().equals(RunCommand.class.getName())) {
                errors.add(event);
            }
        }
        assertThat(errors).as("ERROR events of RunCommand on stdout").singleElement()
                .satisfies(event -> assertThat("pgsink: " + event.path("message").asText()).isEqualTo(stderr));
        assertThat(Files.readString(out)).doesNotContain(PASSWORD);
    }

    /** Runs {@code pgsink run} until it logs that it streams; the lines of {@code out} up to that one. */
    private static List<String> runUntilStreaming(Path config, Path out, Path err, String... jvmOptions)
            throws Exception
    {
        Process process = TestingCommand.startProcess(config, out, err, jvmOptions);
        try {
            ServiceProcess.awaitProgress(process, out, "streaming", Duration.ofSeconds(120),
                    () -> assertThat(Files.readString(out)).contains(STREAMING));
        }
        finally {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        List<String> lines = new ArrayList<>();
        for (String line : Files.readAllLines(out)) {
            lines.add(line);
            if (line.contains(STREAMING)) {
                return lines;
            }
        }
        throw new AssertionError("no line says " + STREAMING);
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public.items");
        properties.put("source.database.password", PASSWORD);
        properties.put("target.password", PASSWORD);
        properties.put("http.port", "0");
        return TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
    }
}
