package io.pgsink.reference;

import io.pgsink.connector.standalone.monitoring.ExportedMetrics;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * docs/reference/metrics.md, generated from the standalone service's meter registry: the Prometheus
 * exposition of a fresh service's meters ({@link ExportedMetrics}), read back into one row per metric
 * family with its type, labels (with their values where the service fixes them) and description.
 */
public final class MetricsReference
{
    /** The page, relative to the repository root. */
    public static final Path FILE = Path.of("docs", "reference", "metrics.md");

    private static final String SINK = "orders";
    private static final String TABLE = "public.orders";
    private static final Pattern HELP = Pattern.compile("# HELP (\\S+) (.*)");
    private static final Pattern TYPE = Pattern.compile("# TYPE (\\S+) (\\S+)");
    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? \\S+");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private static final String INTRO = """
            The standalone service's `/metrics` endpoint (Prometheus text format; `http.port`, 9464, on
            `http.host`) exports these metrics. Every one carries the label `sink` (`sink.name`); `table` is
            the source table as `schema.table`. Besides these, HikariCP reports the target connection pool as
            `hikaricp_connections_*{pool="pgsink-<sink>"}`. The Kafka Connect task's metrics (group
            `pgsink-sink-task`) are listed in
            [Kafka Connect](../guides/kafka-connect.md#failures-validation-and-metrics); how to scrape and alert:
            [Monitoring](../guides/monitoring.md).

            | metric | type | labels | description |
            |---|---|---|---|
            """;

    private MetricsReference()
    {
    }

    public static String generate()
    {
        String exposition = ExportedMetrics.prometheusExposition(SINK, "public", "orders");
        Map<String, Family> families = new LinkedHashMap<>();
        Family current = null;
        for (String line : exposition.split("\n")) {
            Matcher help = HELP.matcher(line);
            Matcher type = TYPE.matcher(line);
            Matcher sample = SAMPLE.matcher(line);
            if (help.matches()) {
                current = families.computeIfAbsent(help.group(1), Family::new);
                current.help = help.group(2);
            }
            else if (type.matches()) {
                current = families.computeIfAbsent(type.group(1), Family::new);
                current.type = type.group(2);
            }
            else if (sample.matches() && current != null && sample.group(2) != null) {
                Matcher label = LABEL.matcher(sample.group(2));
                while (label.find()) {
                    current.label(label.group(1), label.group(2));
                }
            }
        }
        StringBuilder page = new StringBuilder("# Metrics reference\n\n")
                .append(Regeneration.notice(MetricsReference.class, "MetricsReferenceTest"))
                .append(INTRO);
        for (Family family : families.values()) {
            page.append("| `").append(family.name).append("` | ").append(family.type).append(" | ")
                    .append(String.join(", ", family.labels())).append(" | ")
                    .append(family.help.replace("|", "\\|")).append(" |\n");
        }
        return page.toString();
    }

    /** One metric family of the exposition. */
    private static final class Family
    {
        final String name;
        String help = "";
        String type = "";
        final Map<String, Set<String>> labels = new LinkedHashMap<>();

        Family(String name)
        {
            this.name = name;
        }

        void label(String label, String value)
        {
            labels.computeIfAbsent(label, ignored -> new TreeSet<>()).add(value);
        }

        /** {@code sink} and {@code table} by name; labels the service fixes with their values. */
        List<String> labels()
        {
            List<String> described = new ArrayList<>();
            labels.forEach((label, values) -> {
                if (label.equals("sink") || label.equals("table") || label.equals("le")) {
                    described.add("`" + label + "`");
                }
                else {
                    described.add("`" + label + "` (" + String.join(", ", values) + ")");
                }
            });
            return described;
        }
    }
}
