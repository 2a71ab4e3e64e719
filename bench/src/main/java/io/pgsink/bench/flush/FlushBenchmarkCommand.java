package io.pgsink.bench.flush;

import io.pgsink.bench.support.LoadAverage;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The command line of {@link FlushBenchmark}: every option with its default, parsed by picocli
 * ({@code --help} lists them).
 */
@Command(name = "FlushBenchmark", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Applies the same change streams with pgsink, the JDBC baselines and the Debezium JDBC sink in "
                + "one run against one server, "
                + "checks every method's final rows, and prints events/s, ratios to pgsink and CPU seconds.")
final class FlushBenchmarkCommand
        implements Callable<Integer>
{
    @Option(names = "--url",
            defaultValue = "${env:PGSINK_TEST_JDBC_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}",
            description = "JDBC URL of the target server (default: $PGSINK_TEST_JDBC_URL, else the local server).")
    String url;

    @Option(names = "--suites", split = ",", defaultValue = "headline",
            description = "headline, scaling and/or small (default: ${DEFAULT-VALUE}).")
    List<String> suites;

    @Option(names = "--report",
            description = "Directory to write the Markdown report and SVG chart into; none by default.")
    Path report;

    @Option(names = "--report-name", defaultValue = MacroReport.DEFAULT_NAME,
            description = "File name of the report, without extension (default: ${DEFAULT-VALUE}).")
    String reportName;

    @Option(names = "--events", defaultValue = "1000000",
            description = "Events of S1 and S2 (default: ${DEFAULT-VALUE}).")
    long events;

    @Option(names = "--base-rows", defaultValue = "500000",
            description = "Rows of the S2 table before the stream (default: ${DEFAULT-VALUE}).")
    long baseRows;

    @Option(names = "--batch", defaultValue = "10000", description = "Events per flush (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--scenarios", split = ",", defaultValue = "S1,S2,S2W",
            description = "Headline scenarios (default: ${DEFAULT-VALUE}).")
    List<String> scenarios;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of the workloads (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--methods", defaultValue = "all",
            description = "all, or a list of pgsink, jdbc, merged, raw, debezium... (default: ${DEFAULT-VALUE}).")
    String methods;

    @Option(names = "--wide-events", defaultValue = "200000",
            description = "Events of S2W (default: ${DEFAULT-VALUE}).")
    long wideEvents;

    @Option(names = "--wide-base-rows", defaultValue = "100000",
            description = "Rows of the S2W table before the stream (default: ${DEFAULT-VALUE}).")
    long wideBaseRows;

    @Option(names = "--scaling-batches", split = ",", defaultValue = "1000,10000,100000",
            description = "Batch sizes of the scaling suite (default: ${DEFAULT-VALUE}).")
    List<Integer> scalingBatches;

    @Option(names = "--scaling-base-rows", split = ",", defaultValue = "500000,5000000",
            description = "Table sizes of the scaling suite (default: ${DEFAULT-VALUE}).")
    List<Long> scalingBaseRows;

    @Option(names = "--small-flushes", defaultValue = "2000",
            description = "Flushes of the small suite (default: ${DEFAULT-VALUE}).")
    int smallFlushes;

    @Option(names = "--runs", defaultValue = "1",
            description = "Times to run everything, to show the noise: each run's table, then the spread (default: "
            + "${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--small-batch", defaultValue = "100",
            description = "Events per flush of the small suite (default: ${DEFAULT-VALUE}).")
    int smallBatch;

    @Option(names = "--target-latency-ms", defaultValue = "0",
            description = "Round trip added between the methods and the target by a relay, e.g. 0.5 (switched "
                    + "network) or 5 (WiFi); 0 connects directly (default: ${DEFAULT-VALUE}).")
    double targetLatencyMs;

    private final String commandLine;

    FlushBenchmarkCommand(String commandLine)
    {
        this.commandLine = commandLine;
    }

    FlushBenchmark.Options options()
    {
        return new FlushBenchmark.Options(url, "pgsink_bench", suites, events, baseRows, batch, scenarios, seed,
                methods, wideEvents, wideBaseRows,
                scalingBatches, scalingBaseRows, smallFlushes, smallBatch, true, targetLatencyMs);
    }

    @Override
    public Integer call()
            throws Exception
    {
        FlushBenchmark.Options options = options();
        String loadAverage = LoadAverage.read();
        List<List<FlushBenchmark.Result>> all = new ArrayList<>();
        List<FlushBenchmark.Result> results = List.of();
        for (int run = 1; run <= runs; run++) {
            results = FlushBenchmark.run(options);
            all.add(results);
            System.out.println();
            if (runs > 1) {
                System.out.println("Run " + run + " of " + runs + ":");
            }
            System.out.println(FlushBenchmark.table(results));
        }
        if (runs > 1) {
            System.out.println("Spread over " + runs + " runs:");
            System.out.println(RunSpread.table(all));
        }
        // the report shows the last run
        if (report != null) {
            List<Path> written = MacroReport.write(report, reportName, commandLine, options, loadAverage, results);
            written.forEach(path -> System.out.println("Wrote " + path));
        }
        return 0;
    }

    static int execute(String... args)
    {
        StringBuilder command = new StringBuilder("java -Xmx8g -cp bench/target/benchmarks.jar ")
                .append(FlushBenchmark.class.getName());
        for (String arg : args) {
            command.append(' ').append(arg.contains("?") || arg.contains("&") ? "'" + arg + "'" : arg);
        }
        return new CommandLine(new FlushBenchmarkCommand(command.toString())).execute(args);
    }
}
