package io.pgsink.connector.standalone.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The monitoring stack of docker/monitoring against a running service: every metric name the Grafana
 * dashboard and the Prometheus alert rules use is one the service's {@code /metrics} exports (after
 * an initial load and a few changes), or one postgres-exporter's query of
 * {@code postgres-exporter-queries.yaml} produces; the Connect worker's JMX exporter mapping produces
 * only names the service exports (so the same dashboard and rules read both); and that query runs on
 * PostgreSQL and reports the WAL a logical slot holds back.
 */
class MonitoringMetricsIT
{
    private static final Path MONITORING = Path.of("../../docker/monitoring").toAbsolutePath().normalize();
    private static final Pattern METRIC = Pattern.compile("\\b((?:pgsink|hikaricp)_[a-z0-9_]+)\\b");
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final ObjectMapper YAML = new YAMLMapper();

    @Test
    void everyMetricTheDashboardAndTheAlertRulesNameIsExported()
            throws Exception
    {
        try (TestingDatabase source = items("pgsink_monitoring_source");
                TestingDatabase target = items("pgsink_monitoring_target")) {
            source.execute("INSERT INTO public.items SELECT g, 'n' || g FROM generate_series(1, 20) g");
            checkNamesAgainst(scrapeAfterLoadAndChanges(source, target));
        }
    }

    private static void checkNamesAgainst(Set<String> exported)
            throws Exception
    {
        Set<String> referenced = new TreeSet<>();
        referenced.addAll(metricNames(Files.readString(MONITORING.resolve("grafana/dashboards/pgsink.json"))));
        referenced.addAll(metricNames(Files.readString(MONITORING.resolve("pgsink-alerts.yml"))));
        assertThat(referenced).contains("pgsink_state", "pgsink_source_lag_seconds", "pgsink_flush_seconds_bucket",
                "pgsink_rows_applied_total", "pgsink_source_slot_wal_retained_bytes");
        Set<String> fromPostgresExporter = postgresExporterMetrics();
        assertThat(fromPostgresExporter).contains("pgsink_source_slot_wal_retained_bytes");

        Set<String> missing = new TreeSet<>(referenced);
        missing.removeAll(exported);
        missing.removeAll(fromPostgresExporter);
        assertThat(missing).as("metrics the dashboard or the alert rules use that neither /metrics nor"
                + " postgres-exporter provides; /metrics has %s", exported).isEmpty();

        // the Connect worker's metrics arrive under the service's names (docker/monitoring/connect-metrics.yaml)
        JsonNode jmx = YAML.readTree(MONITORING.resolve("connect-metrics.yaml").toFile());
        Set<String> mapped = new TreeSet<>();
        for (JsonNode rule : jmx.path("rules")) {
            mapped.add(rule.path("name").asText());
            assertThat(rule.path("labels").path("sink").asText()).as("sink label of %s", rule.path("name"))
                    .isEqualTo("$1");
        }
        assertThat(mapped).contains("pgsink_state", "pgsink_source_lag_seconds", "pgsink_flush_seconds_count");
        assertThat(exported).as("names the Connect mapping produces").containsAll(mapped);
    }

    @Test
    void postgresExportersSlotQueryReportsTheWalASlotHoldsBack()
            throws Exception
    {
        String query = YAML.readTree(MONITORING.resolve("postgres-exporter-queries.yaml").toFile())
                .path("pgsink_source_slot").path("query").asText();
        String slot = TestingDatabase.randomName("pgsink_monitoring");
        try (TestingDatabase source = items("pgsink_monitoring_source"); Connection connection = source.connect();
                Statement statement = connection.createStatement()) {
            statement.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
            try {
                long before = retained(statement, query, slot);
                // WAL written after the slot's restart_lsn is held for it, as while its consumer is stopped
                statement.execute("INSERT INTO public.items SELECT g, repeat('x', 1000)"
                        + " FROM generate_series(100, 2100) g");
                long after = retained(statement, query, slot);
                assertThat(after).as("WAL retained by slot %s after 2 MB of inserts (before: %s)", slot, before)
                        .isGreaterThan(before + 1_000_000);
            }
            finally {
                statement.execute("SELECT pg_drop_replication_slot('" + slot + "')");
            }
        }
    }

    private static long retained(Statement statement, String query, String slot)
            throws Exception
    {
        try (ResultSet rows = statement.executeQuery(query)) {
            while (rows.next()) {
                if (rows.getString("slot_name").equals(slot)) {
                    assertThat(rows.getInt("active")).as("active of a slot without consumer").isZero();
                    return rows.getLong("wal_retained_bytes");
                }
            }
        }
        throw new AssertionError("the query of postgres-exporter-queries.yaml does not report slot " + slot);
    }

    /** A new database with an empty table public.items. */
    private static TestingDatabase items(String prefix)
            throws Exception
    {
        TestingDatabase database = TestingDatabase.create(prefix);
        database.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
        return database;
    }

    private static Set<String> scrapeAfterLoadAndChanges(TestingDatabase source, TestingDatabase target)
            throws Exception
    {
        Map<String, String> properties = source.serviceProperties(target, "public.items", "monitoring");
        HttpClient client = HttpClient.newHttpClient();
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the initial load", WAIT, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.items")).isEqualTo(List.of(List.of("20")));
            });
            source.execute("INSERT INTO public.items VALUES (21, 'new')",
                    "UPDATE public.items SET note = 'changed' WHERE id = 1",
                    "DELETE FROM public.items WHERE id = 2");
            RunningService.await("the changes", WAIT, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*), max(note) FROM public.items"))
                        .isEqualTo(List.of(List.of("20", "new")));
            });
            URI uri = URI.create("http://127.0.0.1:" + running.service().httpPort() + "/metrics");
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build();
            // a table's counters appear with its first flush reported, a moment after its rows (with
            // flush.pipelined, at the sink's next call: the next engine batch, at the latest the next heartbeat)
            RunningService.await("the first flush's report", WAIT, () -> assertThat(
                    client.send(request, HttpResponse.BodyHandlers.ofString()).body())
                    .contains("pgsink_rows_applied_total"));
            String metrics = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
            Set<String> exported = new TreeSet<>();
            for (String line : metrics.split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    exported.add(line.split("[{ ]", 2)[0]);
                }
            }
            return exported;
        }
    }

    /** The names postgres-exporter makes of postgres-exporter-queries.yaml: query '_' column, per non-label column. */
    private static Set<String> postgresExporterMetrics()
            throws Exception
    {
        Set<String> names = new TreeSet<>();
        JsonNode queries = YAML.readTree(MONITORING.resolve("postgres-exporter-queries.yaml").toFile());
        for (Iterator<Map.Entry<String, JsonNode>> query = queries.fields(); query.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = query.next();
            for (JsonNode metric : entry.getValue().path("metrics")) {
                metric.fields().forEachRemaining(column -> {
                    if (!column.getValue().path("usage").asText().equals("LABEL")) {
                        names.add(entry.getKey() + "_" + column.getKey());
                    }
                });
            }
        }
        return names;
    }

    private static Set<String> metricNames(String text)
    {
        Set<String> names = new TreeSet<>();
        Matcher matcher = METRIC.matcher(text);
        while (matcher.find()) {
            names.add(matcher.group(1));
        }
        return names;
    }
}
