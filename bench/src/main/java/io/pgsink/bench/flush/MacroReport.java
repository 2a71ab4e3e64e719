package io.pgsink.bench.flush;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Writes the macro benchmark's results as a Markdown report ({@code flush-benchmark.md}) and a
 * chart of events per second per method and scenario ({@code flush-benchmark.svg}), both into one
 * directory. Everything in them comes from one run; the report names the command that made it.
 */
final class MacroReport
{
    static final String DEFAULT_NAME = "flush-benchmark";

    private static final String[] COLORS = {"#1f6feb", "#5a9bf6", "#d29922", "#bf8700", "#cf222e", "#6e7781",
            "#8c959f"};

    private MacroReport() {}

    /** Writes {@code name.md} and, when the headline suite ran, {@code name.svg} into {@code directory}. */
    static List<Path> write(Path directory, String name, String command, FlushBenchmark.Options options,
            String loadAverage, List<FlushBenchmark.Result> results)
            throws IOException
    {
        Files.createDirectories(directory);
        Path markdown = directory.resolve(name + ".md");
        Files.writeString(markdown, markdown(name + ".svg", command, options, loadAverage, results));
        List<Path> written = new ArrayList<>(List.of(markdown));
        List<FlushBenchmark.Result> headline = results.stream().filter(result -> result.suite().equals("headline"))
                .toList();
        if (!headline.isEmpty()) {
            Path chart = directory.resolve(name + ".svg");
            Files.writeString(chart, chart(headline));
            written.add(chart);
        }
        return written;
    }

    static String markdown(String chart, String command, FlushBenchmark.Options options, String loadAverage,
            List<FlushBenchmark.Result> results)
    {
        StringBuilder out = new StringBuilder();
        out.append("# pgsink macro benchmark\n\n");
        out.append("One run, ").append(DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC)
                .withNano(0))).append(" UTC, made by\n\n```bash\n")
                .append("./mvnw -q -pl bench -am package -DskipTests\n").append(command).append("\n```\n\n");
        out.append("Machine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, ")
                .append(ManagementFactory.getRuntimeMXBean().getVmName()).append(' ')
                .append(Runtime.version()).append("; load average before the run ").append(loadAverage)
                        .append(". The server on the same machine")
                .append(options.targetLatencyMs() > 0 ? String.format(Locale.ROOT,
                        ", behind a relay that adds a %s ms round trip", options.targetLatencyMs()) : "")
                .append(". ")
                .append("Every ratio compares methods **within this one run**. Every method's final table was "
                        + "checked against the expected rows (row count and an ")
                .append("order-independent md5 checksum of every row; the checksums are listed below).\n\n");
        out.append("CPU seconds: *client* is the benchmark JVM's process CPU time (all threads, GC and JIT included) "
                + "while the method applies the stream; ")
                .append("*server* is the whole PostgreSQL process tree's CPU time over the same interval, from "
                        + "`/proc` (backends, WAL writer, checkpointer; ")
                .append("backends that exit are counted through the postmaster's reaped-children time); *unknown* "
                        + "where the server is not on this machine or is ")
                .append("a Greenplum or Cloudberry cluster (whose segments run postmasters of their own).\n\n");
        Map<String, List<FlushBenchmark.Result>> bySuite = new LinkedHashMap<>();
        for (FlushBenchmark.Result result : results) {
            bySuite.computeIfAbsent(result.suite(), suite -> new ArrayList<>()).add(result);
        }
        for (Map.Entry<String, List<FlushBenchmark.Result>> suite : bySuite.entrySet()) {
            switch (suite.getKey()) {
                case "headline" -> headline(out, chart, options, suite.getValue());
                case "scaling" -> scaling(out, suite.getValue());
                case "small" -> small(out, suite.getValue());
                default -> throw new IllegalArgumentException("suite " + suite.getKey());
            }
        }
        out.append("## Final-state checksums\n\n| case | rows and checksum (same for every method) |\n|---|---|\n");
        Map<String, String> checksums = new LinkedHashMap<>();
        for (FlushBenchmark.Result result : results) {
            checksums.putIfAbsent(result.suite() + ": " + result.caseName(), result.checksum());
        }
        checksums.forEach((name, checksum) -> out.append("| ").append(name).append(" | ").append(checksum)
                .append(" |\n"));
        return out.toString();
    }

    private static void headline(StringBuilder out, String chart, FlushBenchmark.Options options,
            List<FlushBenchmark.Result> results)
    {
        out.append("## Headline: events per second\n\n");
        out.append(String.format(Locale.ROOT,
                "S1: %,d inserts into an empty table; S2: %,d changes (50%% inserts, 35%% updates, 15%% deletes) "
                + "against a %,d-row table; "
                + "S2W: S2's mix, %,d changes against a %,d-row table of 30 columns with three large text values "
                        + "(0.2 to 3 kB). %,d events per batch (transaction).%n%n",
                options.events(), options.events(), options.baseRows(), options.wideEvents(), options.wideBaseRows(),
                        options.batch()));
        out.append("![events per second per method and scenario](").append(chart).append(")\n\n");
        out.append(FlushBenchmark.table(results)).append('\n');
        out.append("## Targets\n\n| target | measured | |\n|---|---:|---|\n");
        Optional<FlushBenchmark.Result> s1 = find(results, "S1", PgsinkMethod.NAME);
        Optional<FlushBenchmark.Result> s2 = find(results, "S2 mixed", PgsinkMethod.NAME);
        Optional<FlushBenchmark.Result> debezium = results.stream().filter(result -> result.scenario()
                .equals("S2 mixed") && result.method().startsWith("Debezium")).findFirst();
        Optional<FlushBenchmark.Result> bestJdbc = results.stream().filter(result -> result.scenario()
                .equals("S2 mixed") && (result.method().startsWith("JDBC") || result.method().startsWith("merged")))
                .max((a, b) -> Double.compare(a.eventsPerSecond(), b.eventsPerSecond()));
        Optional<FlushBenchmark.Result> raw = find(results, "S1", "raw COPY, unindexed table");
        Optional<FlushBenchmark.Result> rawIndexed = find(results, "S1", "raw COPY, indexed table");
        target(out, "S2: pgsink ≥ 4× the Debezium JDBC sink", s2, debezium, 4);
        target(out, "S2: pgsink ≥ 2× the best JDBC baseline" + bestJdbc.map(best -> " (" + best.method() + ")")
                .orElse(""), s2, bestJdbc, 2);
        target(out, "S1: pgsink ≥ 0.8× a raw COPY into an unindexed table", s1, raw, 0.8);
        target(out, "S1: pgsink ≥ 0.9× a raw COPY into the same table with its primary key", s1, rawIndexed, 0.9);
        out.append('\n');
    }

    private static Optional<FlushBenchmark.Result> find(List<FlushBenchmark.Result> results, String scenarioPrefix,
            String method)
    {
        return results.stream().filter(result -> result.scenario().startsWith(scenarioPrefix) && result.method()
                .equals(method)).findFirst();
    }

    private static void target(StringBuilder out, String name, Optional<FlushBenchmark.Result> pgsink,
            Optional<FlushBenchmark.Result> other, double wanted)
    {
        if (pgsink.isEmpty() || other.isEmpty()) {
            out.append("| ").append(name).append(" | not run | |\n");
            return;
        }
        double ratio = pgsink.get().eventsPerSecond() / other.get().eventsPerSecond();
        out.append(String.format(Locale.ROOT, "| %s | %.2f× | %s |%n", name, ratio,
                ratio >= wanted ? "met" : String.format(Locale.ROOT, "**missed** by %.0f%% (%.2f× of the %.2f× wanted)",
                        (1 - ratio / wanted) * 100, ratio, wanted)));
    }

    private static void scaling(StringBuilder out, List<FlushBenchmark.Result> results)
    {
        out.append("## Scaling: S2 by batch size and by table size\n\n");
        out.append("Seconds per million events show how the cost grows: constant means linear in the events, ")
                .append("growing with the batch or table means a per-batch or per-row cost ")
                .append("that does not amortize.\n\n");
        out.append("| batch | table rows | method | events/s | vs pgsink | s per 1M events | client CPU s | server "
                + "CPU s |\n|---:|---:|---|---:|---:|---:|---:|---:|\n");
        for (FlushBenchmark.Result result : results) {
            out.append(String.format(Locale.ROOT, "| %,d | %,d | %s | %,.0f | %.2fx | %.2f | %.2f | %s |%n",
                    result.batch(), result.baseRows(), result.method(),
                    result.eventsPerSecond(), FlushBenchmark.ratioToPgsink(results, result),
                            result.seconds() / result.events() * 1e6, result.clientCpuSeconds(),
                    FlushBenchmark.cpuSeconds(result.serverCpuSeconds())));
        }
        out.append('\n');
    }

    private static void small(StringBuilder out, List<FlushBenchmark.Result> results)
    {
        FlushBenchmark.Result first = results.get(0);
        out.append("## Small flushes: latency and round trips\n\n");
        out.append(String.format(Locale.ROOT,
                "S2's mix in flushes of %,d events against a %,d-row table, %,d flushes. Latency is the mean wall "
                + "time per flush ",
                first.batch(), first.baseRows(), first.flushes()))
                .append("(the whole stream's time over the number of flushes). Round trips are counted in a second, "
                        + "separate run through a loopback TCP proxy ")
                .append("that counts every time the client sends after the server last answered (pipelined messages "
                        + "cost no extra round trip; ")
                .append("a COPY costs two: the statement, then the data); the timed run does not go through the "
                        + "proxy.\n\n");
        out.append("| method | ms per flush | round trips per flush | client CPU ms per flush | server CPU ms per "
                + "flush | events/s |\n|---|---:|---:|---:|---:|---:|\n");
        for (FlushBenchmark.Result result : results) {
            double flushes = result.flushes();
            out.append(String.format(Locale.ROOT, "| %s | %.2f | %.1f | %.2f | %s | %,.0f |%n", result.method(),
                    result.seconds() * 1000 / flushes, result.roundTrips() / flushes,
                    result.clientCpuSeconds() * 1000 / flushes,
                            FlushBenchmark.cpuSeconds(result.serverCpuSeconds() * 1000 / flushes),
                            result.eventsPerSecond()));
        }
        out.append('\n');
    }

    /** Horizontal bars of events/s, one group per scenario, one bar per method. */
    static String chart(List<FlushBenchmark.Result> results)
    {
        Map<String, List<FlushBenchmark.Result>> byScenario = new LinkedHashMap<>();
        List<String> methods = new ArrayList<>();
        for (FlushBenchmark.Result result : results) {
            byScenario.computeIfAbsent(result.scenario(), scenario -> new ArrayList<>()).add(result);
            if (!methods.contains(result.method())) {
                methods.add(result.method());
            }
        }
        int left = 290;
        int barWidth = 480;
        int right = 190;
        int barHeight = 18;
        int gap = 5;
        int groupGap = 30;
        int top = 60;
        int height = top + 10;
        for (List<FlushBenchmark.Result> group : byScenario.values()) {
            height += 18 + group.size() * (barHeight + gap) + groupGap;
        }
        int width = left + barWidth + right;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                + "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">%n",
                width, height, width, height));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>%n", width, height));
        svg.append("<text x=\"10\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Events per second applied to "
                + "PostgreSQL (one run; higher is better)</text>\n");
        svg.append("<text x=\"10\" y=\"42\" fill=\"#57606a\">each scenario has its own scale (0 to the right end of "
                + "its axis); in parentheses: ratio to pgsink (COPY + merge) in the same scenario</text>\n");
        int y = top;
        for (Map.Entry<String, List<FlushBenchmark.Result>> group : byScenario.entrySet()) {
            double scaleMax = niceCeiling(group.getValue().stream().mapToDouble(FlushBenchmark.Result::eventsPerSecond)
                    .max().orElse(1));
            int groupBottom = y + 18 + group.getValue().size() * (barHeight + gap);
            svg.append(String.format(Locale.ROOT, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s</text>%n", y + 12,
                    escape(group.getKey())));
            for (int tick = 0; tick <= 4; tick++) {
                int x = left + barWidth * tick / 4;
                svg.append(String.format(Locale.ROOT,
                        "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#d0d7de\"/>%n", x, y + 16, x,
                        groupBottom));
                svg.append(String.format(Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#57606a\" font-size=\"10\">%s</text>%n",
                        x, groupBottom + 12,
                        humanRate(scaleMax * tick / 4)));
            }
            y += 18;
            for (FlushBenchmark.Result result : group.getValue()) {
                int length = Math.max(1, (int) Math.round(barWidth * result.eventsPerSecond() / scaleMax));
                String color = COLORS[methods.indexOf(result.method()) % COLORS.length];
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>%n",
                        left - 8, y + barHeight - 5, escape(result.method())));
                svg.append(String.format(Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>%n", left, y, length,
                        barHeight, color));
                svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%,.0f (%.2fx)</text>%n", left + length
                        + 6, y + barHeight - 5, result.eventsPerSecond(),
                        FlushBenchmark.ratioToPgsink(results, result)));
                y += barHeight + gap;
            }
            y += groupGap;
        }
        svg.append("</svg>\n");
        return svg.toString();
    }

    private static double niceCeiling(double value)
    {
        double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
        for (double step : new double[] {1, 2, 2.5, 4, 5, 8, 10}) {
            if (step * magnitude >= value) {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String humanRate(double value)
    {
        if (value >= 1_000_000) {
            return String.format(Locale.ROOT, "%.3gM", value / 1_000_000);
        }
        String thousands = String.format(Locale.ROOT, "%.1f", value / 1000);
        return value >= 1000 ? (thousands.endsWith(".0") ? thousands.substring(0, thousands.length() - 2) : thousands)
                + "k" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String escape(String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
