package io.pgsink.connector.kafka;

import io.prometheus.jmx.JmxCollector;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Prometheus scrapes from a Connect worker that runs the JMX exporter agent with
 * docker/monitoring/connect-metrics.yaml (as the compose stack's worker does): that file's rules
 * applied to this JVM's MBeans by the exporter's own collector, in the text format.
 */
final class PrometheusExport
{
    static final Path CONFIG = Path.of("../../docker/monitoring/connect-metrics.yaml").toAbsolutePath().normalize();

    private PrometheusExport() {}

    static String scrape()
            throws Exception
    {
        PrometheusRegistry registry = new PrometheusRegistry();
        new JmxCollector(Files.readString(CONFIG)).register(registry);
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        new PrometheusTextFormatWriter(false).write(text, registry.scrape());
        return text.toString(StandardCharsets.UTF_8);
    }
}
