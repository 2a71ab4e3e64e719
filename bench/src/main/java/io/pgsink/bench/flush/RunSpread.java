package io.pgsink.bench.flush;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The noise of the machine: the same benchmark run several times ({@code --runs N}), each case and
 * method's events/s and ratio to pgsink per run, with the spread of the ratio. A difference smaller
 * than the spread is not a difference.
 */
final class RunSpread
{
    private RunSpread() {}

    /** A Markdown table over {@code runs}, each the results of one whole run, in the order of the first. */
    static String table(List<List<FlushBenchmark.Result>> runs)
    {
        Map<String, List<String>> eventsPerSecond = new LinkedHashMap<>();
        Map<String, List<Double>> ratios = new LinkedHashMap<>();
        for (List<FlushBenchmark.Result> run : runs) {
            for (FlushBenchmark.Result result : run) {
                String key = result.caseName() + " | " + result.method();
                eventsPerSecond.computeIfAbsent(key, ignored -> new ArrayList<>()).add(String.format(Locale.ROOT,
                        "%,.0f", result.eventsPerSecond()));
                ratios.computeIfAbsent(key, ignored -> new ArrayList<>()).add(FlushBenchmark.ratioToPgsink(run,
                        result));
            }
        }
        StringBuilder table = new StringBuilder("| case | method | events/s per run | vs pgsink per run | vs pgsink "
                + "min–max |\n|---|---|---:|---:|---:|\n");
        for (Map.Entry<String, List<String>> entry : eventsPerSecond.entrySet()) {
            List<Double> each = ratios.get(entry.getKey());
            StringJoiner ratioText = new StringJoiner(", ");
            double min = Double.MAX_VALUE;
            double max = -Double.MAX_VALUE;
            for (double ratio : each) {
                ratioText.add(String.format(Locale.ROOT, "%.2fx", ratio));
                min = Math.min(min, ratio);
                max = Math.max(max, ratio);
            }
            table.append(String.format(Locale.ROOT, "| %s | %s | %s | %.2fx–%.2fx |%n", entry.getKey(),
                    String.join(", ", entry.getValue()), ratioText, min, max));
        }
        return table.toString();
    }
}
