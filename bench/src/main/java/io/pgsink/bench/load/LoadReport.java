package io.pgsink.bench.load;

import io.pgsink.bench.support.LoadAverage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/** The initial-load benchmark's report ({@link LoadBenchmark}): its results as a Markdown table, and the file. */
final class LoadReport
{
    private LoadReport()
    {
    }

    /** A Markdown table of the results, with rows/s relative to the baseline of the same scenario and run. */
    static String table(List<LoadBenchmark.Result> results)
    {
        StringBuilder table = new StringBuilder("| scenario | method | run | seconds | rows/s | ratio | load phase s "
                + "(rows/s) | client CPU s | server CPU s |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (LoadBenchmark.Result result : results) {
            LoadBenchmark.Result baseline = baseline(results, result);
            table.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %,.0f | %s | %s | %.1f | %s |%n",
                    result.scenario(), result.method().replace("|", "\\|"), result.run(),
                    result.seconds(), result.rowsPerSecond(),
                    baseline == null ? "" : String.format(Locale.ROOT, "%.2f",
                            result.rowsPerSecond() / baseline.rowsPerSecond()),
                    Double.isNaN(result.loadSeconds()) ? "" : String.format(Locale.ROOT, "%.1f (%,.0f)",
                            result.loadSeconds(), result.rows() / result.loadSeconds()), result.clientCpu(),
                    Double.isNaN(result.serverCpu()) ? "?" : String.format(Locale.ROOT, "%.1f", result.serverCpu())));
        }
        return table.toString();
    }

    /** The parallel pipes for several tables, the single pipe for one table, Debezium's path for its table. */
    private static LoadBenchmark.Result baseline(List<LoadBenchmark.Result> results, LoadBenchmark.Result result)
    {
        for (String method : List.of("psql | psql, all tables at once", "psql | psql",
                "Debezium snapshot → pgsink (snapshot.mode=when_needed)")) {
            for (LoadBenchmark.Result candidate : results) {
                if (candidate.scenario().equals(result.scenario()) && candidate.run() == result.run()
                        && candidate.method().equals(method)) {
                    return candidate;
                }
            }
        }
        return null;
    }

    /** Writes the report of a run to {@code file}: how it was run, how to read it, {@code table}. */
    static Path write(Path file, String commandLine, String loadAverage, String table)
            throws IOException
    {
        Files.createDirectories(file.getParent());
        String report = "# Initial load benchmark\n\n"
                + "Written " + Instant.now() + " on " + Runtime.getRuntime().availableProcessors()
                        + " cores; load average before the run " + loadAverage
                + ", after it " + LoadAverage.read() + ".\n\n"
                + "```\n" + commandLine + "\n```\n\n"
                + "Ratio: rows/s relative to the `psql | psql` pipe (one table), to the parallel pipes (several "
                        + "tables), to Debezium's snapshot path (its table), in the same run.\n"
                + "pgsink and Debezium are timed from the start of `pgsink run` (JVM start, slot creation and "
                        + "planning included) until the load's completion row is committed"
                + " (the load phase column: from the progress table's start row, after the slot is created and the "
                        + "tables planned, to the completion row)"
                + " (Debezium: until the target holds every row). Every target table was checked against its source "
                        + "(row count and sum of the rows' md5).\n"
                + "Server CPU is the whole PostgreSQL process tree, other clients of the same server included.\n\n"
                + table;
        Files.writeString(file, report);
        return file;
    }
}
