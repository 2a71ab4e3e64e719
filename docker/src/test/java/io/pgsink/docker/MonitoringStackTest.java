package io.pgsink.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.pgsink.docker.ComposeCliTest.Result;
import io.pgsink.docker.DockerfileInstructions.Instruction;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import javax.xml.parsers.DocumentBuilderFactory;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The compose profile {@code monitoring} (docker/monitoring): its services and files fit the stack
 * (Prometheus scrapes services and ports that exist, Grafana's dashboard uses the provisioned data
 * source), and promtool, where installed, accepts the Prometheus configuration and the alert rules and
 * passes the rules' unit tests ({@code pgsink-alerts-test.yml} fires each alert). That every metric
 * the dashboard and the rules name is exported is checked against a running service by
 * connector/standalone's {@code MonitoringMetricsIT}.
 */
class MonitoringStackTest
{
    private static final Path MONITORING = ComposeStack.DIRECTORY.resolve("monitoring");
    private static final ObjectMapper YAML = new YAMLMapper();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ComposeStack stack = ComposeStack.load();

    @Test
    void theProfileHasPrometheusGrafanaAndTheSlotExporter()
    {
        for (String service : List.of("prometheus", "grafana", "postgres-exporter")) {
            assertThat(ComposeStack.profiles(stack.service(service))).as("profiles of %s", service)
                    .containsExactly("monitoring");
        }
        assertThat(ComposeStack.environment(stack.service("postgres-exporter")).get("DATA_SOURCE_NAME"))
                .contains("@source-postgres:5432/shop");
    }

    @Test
    void prometheusScrapesServicesOfTheStackOnTheirMetricsPorts()
            throws IOException
    {
        JsonNode config = YAML.readTree(MONITORING.resolve("prometheus.yml").toFile());
        List<String> targets = new ArrayList<>();
        for (JsonNode job : config.path("scrape_configs")) {
            job.path("static_configs").forEach(group -> targets.addAll(ComposeStack.strings(group.path("targets"))));
        }
        assertThat(targets).contains("pgsink:9464", "connect:9404", "postgres-exporter:9187");
        for (String target : targets) {
            assertThat(stack.services()).as("service of scrape target %s", target)
                    .containsKey(target.substring(0, target.indexOf(':')));
        }
        // the Connect worker's JMX exporter listens where Prometheus looks, with the mapping of docker/monitoring
        String kafkaOptions = ComposeStack.environment(stack.service("connect")).get("KAFKA_OPTS");
        assertThat(kafkaOptions).contains("jmx_prometheus_javaagent.jar=9404:/kafka/jmx-exporter/metrics.yaml");
        assertThat(ComposeStack.strings(stack.service("connect").path("volumes")))
                .contains("./monitoring/connect-metrics.yaml:/kafka/jmx-exporter/metrics.yaml:ro");
        for (JsonNode ruleFile : config.path("rule_files")) {
            assertThat(MONITORING.resolve(ruleFile.asText())).as("rule file").isRegularFile();
        }
    }

    @Test
    void grafanaLoadsTheDashboardWithTheProvisionedDataSource()
            throws IOException
    {
        JsonNode sources = YAML.readTree(MONITORING.resolve("grafana/provisioning/datasources/prometheus.yaml")
                .toFile());
        String uid = sources.path("datasources").get(0).path("uid").asText();
        assertThat(sources.path("datasources").get(0).path("url").asText()).isEqualTo("http://prometheus:9090");

        JsonNode dashboard = JSON.readTree(MONITORING.resolve("grafana/dashboards/pgsink.json").toFile());
        assertThat(dashboard.path("uid").asText()).isEqualTo("pgsink");
        assertThat(dashboard.path("panels").size()).isGreaterThan(5);
        for (JsonNode panel : dashboard.path("panels")) {
            assertThat(panel.path("datasource").path("uid").asText()).as("data source of panel %s", panel.path("title"))
                    .isEqualTo(uid);
            assertThat(panel.path("targets").size()).as("queries of panel %s", panel.path("title")).isPositive();
            for (JsonNode target : panel.path("targets")) {
                assertThat(target.path("expr").asText()).as("query of panel %s", panel.path("title")).isNotBlank();
            }
        }
    }

    @Test
    void theConnectWorkerRunsTheJmxExporterTheKafkaTestsCheckTheMappingWith()
            throws Exception
    {
        String argument = DockerfileInstructions.read(ComposeStack.DIRECTORY.resolve("connect/Dockerfile")).stream()
                .filter(instruction -> instruction.keyword().equals("ARG"))
                .filter(instruction -> instruction.arguments().startsWith("JMX_EXPORTER_VERSION="))
                .map(Instruction::arguments).findFirst().orElseThrow();
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(ComposeStack.REPOSITORY.resolve("connector/kafka/pom.xml").toFile());
        String tested = pom.getElementsByTagName("jmx-exporter.version").item(0).getTextContent().strip();
        assertThat(argument).isEqualTo("JMX_EXPORTER_VERSION=" + tested);
    }

    @Test
    void promtoolAcceptsTheConfigurationAndTheRulesAndTheirTestsPass()
            throws Exception
    {
        Optional<Path> promtool = promtool();
        assumeTrue(promtool.isPresent(), "No promtool here (Debian: apt-get install prometheus), so the Prometheus"
                + " configuration, the alert rules and their unit tests (docker/monitoring/pgsink-alerts-test.yml)"
                + " are not checked; .ci/run installs it");
        for (List<String> arguments : List.of(List.of("check", "config", "prometheus.yml"),
                List.of("check", "rules", "pgsink-alerts.yml"), List.of("test", "rules", "pgsink-alerts-test.yml"))) {
            List<String> command = new ArrayList<>(List.of(promtool.get().toString()));
            command.addAll(arguments);
            Result result = promtool(command);
            assertThat(result.exitCode()).as("promtool %s: %s", String.join(" ", arguments), result.output())
                    .isZero();
        }
    }

    @Test
    void theRuleTestsFailWhenAnAlertDoesNotFire()
            throws Exception
    {
        Optional<Path> promtool = promtool();
        assumeTrue(promtool.isPresent(), "No promtool here (Debian: apt-get install prometheus):"
                + " the rule tests' own check is skipped");
        // the same tests against rules whose lag threshold is out of reach: PgsinkLagHigh must be reported missing
        Path directory = Files.createTempDirectory("pgsink-alerts");
        Files.writeString(directory.resolve("pgsink-alerts.yml"),
                Files.readString(MONITORING.resolve("pgsink-alerts.yml"))
                        .replace("(pgsink_source_lag_seconds) > 300", "(pgsink_source_lag_seconds) > 3000"));
        Files.copy(MONITORING.resolve("pgsink-alerts-test.yml"), directory.resolve("pgsink-alerts-test.yml"));
        Result result = ComposeCliTest.run(List.of(promtool.get().toString(), "test", "rules",
                directory.resolve("pgsink-alerts-test.yml").toString()));
        assertThat(result.exitCode()).as("promtool test rules with a broken rule: %s", result.output()).isNotZero();
        assertThat(result.output()).contains("alertname: PgsinkLagHigh");
    }

    private static Result promtool(List<String> command)
            throws Exception
    {
        // promtool resolves rule_files and the tests' rule files relative to the file it reads: give it absolute paths
        List<String> absolute = new ArrayList<>(command.subList(0, command.size() - 1));
        absolute.add(MONITORING.resolve(command.get(command.size() - 1)).toString());
        return ComposeCliTest.run(absolute);
    }

    private static Optional<Path> promtool()
    {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(directory, "promtool");
            if (Files.isExecutable(candidate)) {
                return Optional.of(candidate);
            }
        }
        return Optional.empty();
    }
}
