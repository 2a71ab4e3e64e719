package io.pgsink.bench.load;

import io.pgsink.bench.support.LoadAverage;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The command line of the initial-load benchmark ({@link LoadBenchmark}): every option with its
 * default, parsed by picocli ({@code --help} lists them).
 */
@Command(name = "LoadBenchmark", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Copies the same tables from a source database into an indexed target with pgsink's initial "
                + "load, psql COPY pipes (sequential and parallel), "
                + "pg_dump | psql and Debezium's snapshot path, checks every target table against the source (count "
                        + "and md5), and prints rows/s, ratios and CPU seconds.")
public final class LoadBenchmarkCommand
        implements Callable<Integer>
{
    @Option(names = "--url",
            defaultValue = "${env:PGSINK_TEST_JDBC_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}",
            description = "JDBC URL of the server (wal_level=logical); the source and target databases are created "
                    + "on it (default: $PGSINK_TEST_JDBC_URL, else the local server).")
    String url;

    @Option(names = "--jar", defaultValue = "connector/standalone/target/pgsink.jar",
            description = "The pgsink runnable jar (default: ${DEFAULT-VALUE}).")
    Path jar;

    @Option(names = "--big-rows", defaultValue = "5000000",
            description = "Rows of the one large table (default: ${DEFAULT-VALUE}).")
    long bigRows;

    @Option(names = "--tables", defaultValue = "8",
            description = "How many smaller tables (default: ${DEFAULT-VALUE}).")
    int tables;

    @Option(names = "--rows", defaultValue = "500000",
            description = "Rows of each smaller table (default: ${DEFAULT-VALUE}).")
    long rows;

    @Option(names = "--debezium-rows", defaultValue = "200000",
            description = "Rows of the table Debezium's snapshot path copies, smaller because it is slow (default: "
            + "${DEFAULT-VALUE}).")
    long debeziumRows;

    @Option(names = "--parallelism", split = ",", defaultValue = "0",
            description = "initial.load.parallelism values to run pgsink with; 0 is the service's own default, the "
            + "processors within 2 to 4 (default: ${DEFAULT-VALUE}).")
    List<Integer> parallelism;

    @Option(names = "--formats", split = ",", defaultValue = "auto",
            description = "initial.load.copy.format values to run pgsink with: auto, text and/or binary (default: "
            + "${DEFAULT-VALUE}).")
    List<String> formats;

    @Option(names = "--repeat", defaultValue = "1",
            description = "How many times each method runs; every run is reported (default: ${DEFAULT-VALUE}).")
    int repeat;

    @Option(names = "--methods", split = ",", defaultValue = "pgsink,pipe,parallel-pipes,pg_dump,debezium",
            description = "Methods to run (default: ${DEFAULT-VALUE}).")
    List<String> methods;

    @Option(names = "--report", description = "Directory to write the Markdown report into; none by default.")
    Path report;

    @Option(names = "--report-name", defaultValue = "initial-load",
            description = "File name of the report, without extension (default: ${DEFAULT-VALUE}).")
    String reportName;

    private final String commandLine;

    LoadBenchmarkCommand(String commandLine)
    {
        this.commandLine = commandLine;
    }

    @Override
    public Integer call()
            throws Exception
    {
        String loadAverage = LoadAverage.read();
        LoadBenchmark benchmark = new LoadBenchmark(url, jar, bigRows, tables, rows, debeziumRows, parallelism, formats,
                repeat, methods);
        List<LoadBenchmark.Result> results = benchmark.run();
        String table = LoadReport.table(results);
        System.out.println();
        System.out.println(table);
        if (report != null) {
            Path written = LoadReport.write(report.resolve(reportName + ".md"), commandLine, loadAverage,
                    table);
            System.out.println("Wrote " + written);
        }
        return 0;
    }

    /** Runs the benchmark; {@code --help} lists the options. */
    public static void main(String[] args)
    {
        StringBuilder command = new StringBuilder("java -cp bench/target/benchmarks.jar ")
                .append(LoadBenchmarkCommand.class.getName());
        for (String arg : args) {
            command.append(' ').append(arg.contains("?") || arg.contains("&") ? "'" + arg + "'" : arg);
        }
        System.exit(new CommandLine(new LoadBenchmarkCommand(command.toString())).execute(args));
    }
}
