package io.pgsink.bench.backlog;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/** The Markdown tables of {@link BacklogBenchmark}: per case and run, and CPU per event per thread group. */
final class BacklogReport
{
    private BacklogReport() {}

    static String table(List<BacklogBenchmark.CaseRun> results, BacklogBenchmark.Backlog backlog)
    {
        Map<String, List<BacklogBenchmark.CaseRun>> byCase = new LinkedHashMap<>();
        for (BacklogBenchmark.CaseRun result : results) {
            byCase.computeIfAbsent(result.name(), ignored -> new ArrayList<>()).add(result);
        }
        List<BacklogBenchmark.CaseRun> ceiling = byCase.getOrDefault("debezium", List.of());
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%s.%n%n", backlog.describe()));
        table.append("| case | wall s per run | events/s (median) | wall vs debezium per run | JVM CPU us/event per "
                + "run | JVM CPU vs debezium per run "
                + "| walsender us/event | target backends us/event |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, List<BacklogBenchmark.CaseRun>> entry : byCase.entrySet()) {
            List<BacklogBenchmark.CaseRun> runs = entry.getValue();
            table.append(String.format(Locale.ROOT, "| %s | %s | %,.0f | %s | %s | %s | %s | %s |%n", entry.getKey(),
                    each(runs, BacklogBenchmark.CaseRun::wallSeconds, "%.1f"),
                    median(runs, run -> run.events() / run.wallSeconds()),
                    ratios(runs, ceiling, BacklogBenchmark.CaseRun::wallSeconds),
                    each(runs, BacklogBenchmark.CaseRun::cpuMicrosPerEvent, "%.1f"),
                    ratios(runs, ceiling, BacklogBenchmark.CaseRun::cpuMicrosPerEvent),
                    each(runs, run -> server(run, "walsender"), "%.1f"),
                    each(runs, run -> server(run, "target backends"), "%.1f")));
        }
        table.append("\nJVM CPU microseconds per event by thread (median of the runs, min–max); \"other\" is the "
                + "process CPU no live thread "
                + "accounts for (threads that ended, start-up).\n\n");
        TreeSet<String> groups = BacklogBenchmark.CaseRun.threadGroups(results);
        StringJoiner header = new StringJoiner(" | ", "| thread | ", " |\n");
        StringJoiner rule = new StringJoiner("|", "|---|", "|\n");
        byCase.keySet().forEach(name -> {
            header.add(name);
            rule.add("---:");
        });
        table.append(header).append(rule);
        List<String> rows = new ArrayList<>(groups);
        rows.add("other");
        for (String group : rows) {
            StringJoiner row = new StringJoiner(" | ", "| " + group + " | ", " |\n");
            boolean significant = false;
            for (List<BacklogBenchmark.CaseRun> runs : byCase.values()) {
                ToDoubleFunction<BacklogBenchmark.CaseRun> micros = group.equals("other") ? BacklogReport::otherMicros
                        : run -> run.threads().getOrDefault(group, 0L) / 1e3 / run.events();
                List<Double> values = values(runs, micros);
                significant |= Collections.max(values) >= 0.1;
                row.add(String.format(Locale.ROOT, "%.2f (%.2f–%.2f)", median(runs, micros), Collections.min(values),
                        Collections.max(values)));
            }
            if (significant) {
                table.append(row);
            }
        }
        return table.toString();
    }

    private static double otherMicros(BacklogBenchmark.CaseRun run)
    {
        long threads = run.threads().values().stream().mapToLong(Long::longValue).sum();
        return (run.processCpuNanos() - threads) / 1e3 / run.events();
    }

    private static double server(BacklogBenchmark.CaseRun run, String group)
    {
        return run.server().getOrDefault(group, 0L) / 1e3 / run.events();
    }

    private static List<Double> values(List<BacklogBenchmark.CaseRun> runs,
            ToDoubleFunction<BacklogBenchmark.CaseRun> value)
    {
        List<Double> values = new ArrayList<>();
        runs.forEach(run -> values.add(value.applyAsDouble(run)));
        return values;
    }

    private static double median(List<BacklogBenchmark.CaseRun> runs, ToDoubleFunction<BacklogBenchmark.CaseRun> value)
    {
        List<Double> values = values(runs, value);
        Collections.sort(values);
        int middle = values.size() / 2;
        return values.size() % 2 == 1 ? values.get(middle) : (values.get(middle - 1) + values.get(middle)) / 2;
    }

    private static <T> String each(List<T> runs, ToDoubleFunction<T> value, String format)
    {
        StringJoiner text = new StringJoiner(", ");
        runs.forEach(run -> text.add(String.format(Locale.ROOT, format, value.applyAsDouble(run))));
        return text.toString();
    }

    /** Each run's value over the ceiling's value in the same run (the cases of a run ran one after the other). */
    private static String ratios(List<BacklogBenchmark.CaseRun> runs, List<BacklogBenchmark.CaseRun> ceiling,
            ToDoubleFunction<BacklogBenchmark.CaseRun> value)
    {
        StringJoiner text = new StringJoiner(", ");
        for (BacklogBenchmark.CaseRun run : runs) {
            ceiling.stream().filter(other -> other.run() == run.run()).findFirst()
                    .ifPresent(other -> text.add(String.format(Locale.ROOT, "%.2fx",
                            value.applyAsDouble(run) / value.applyAsDouble(other))));
        }
        return text.length() == 0 ? "–" : text.toString();
    }

    static String steadyTable(List<BacklogBenchmark.SteadyRun> results, double seconds, double warmUpSeconds)
    {
        Map<String, List<BacklogBenchmark.SteadyRun>> byCase = new LinkedHashMap<>();
        for (BacklogBenchmark.SteadyRun result : results) {
            byCase.computeIfAbsent(result.run().name(), ignored -> new ArrayList<>()).add(result);
        }
        StringBuilder table = new StringBuilder(String.format(Locale.ROOT, "%nSteady state: pgsink streaming while "
                + "transactions of 5 changes are written for %.0f s at a fraction of the same run's Debezium ceiling; "
                + "lag from each transaction's commit in the source to the commit of the flush that applied it, "
                + "without the first %.0f s.%n%n", seconds, warmUpSeconds));
        table.append("| case | events/s asked per run | events/s written per run | lag p50 ms per run | lag p99 ms per "
                + "run | lag max ms per run | JVM CPU us/event per run |\n|---|---:|---:|---:|---:|---:|---:|\n");
        for (Map.Entry<String, List<BacklogBenchmark.SteadyRun>> entry : byCase.entrySet()) {
            List<BacklogBenchmark.SteadyRun> runs = entry.getValue();
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", entry.getKey(),
                    each(runs, BacklogBenchmark.SteadyRun::offeredEventsPerSecond, "%,.0f"),
                    each(runs, BacklogBenchmark.SteadyRun::writtenEventsPerSecond, "%,.0f"),
                    each(runs, (BacklogBenchmark.SteadyRun run) -> run.lag().p50Millis(), "%.0f"),
                    each(runs, (BacklogBenchmark.SteadyRun run) -> run.lag().p99Millis(), "%.0f"),
                    each(runs, (BacklogBenchmark.SteadyRun run) -> run.lag().maxMillis(), "%.0f"),
                    each(runs, (BacklogBenchmark.SteadyRun run) -> run.run().cpuMicrosPerEvent(), "%.1f")));
        }
        return table.toString();
    }

    static void write(Path file, String commandLine, String loadAverage, BacklogBenchmark.Backlog backlog,
            List<String> settings, String jvmArgs, String table)
            throws IOException
    {
        Files.createDirectories(file.getParent());
        String text = "# Backlog benchmark: the standalone service against the source and the Debezium ceiling\n\n"
                + "Written " + java.time.Instant.now() + "; load average before the run: " + loadAverage + ".\n\n"
                + "```bash\n./mvnw -q -pl bench -am package -DskipTests\n" + commandLine + "\n```\n\n"
                + "Service settings besides the benchmark's own: " + (settings.isEmpty() ? "none (the defaults)"
                        : String.join(", ", settings))
                + "; JVM options of each case: " + jvmArgs + ".\n\n" + table;
        Files.writeString(file, text);
    }
}
