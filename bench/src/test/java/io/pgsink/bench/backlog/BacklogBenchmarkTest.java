package io.pgsink.bench.backlog;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the backlog benchmark once on a tiny backlog, and a short steady-state case, so CI catches a
 * broken case. Times nothing.
 */
class BacklogBenchmarkTest
{
    @Test
    void everyCaseReadsTheWholeBacklog(@TempDir Path report)
            throws Exception
    {
        int exit = new CommandLine(new BacklogBenchmark("test")).execute("--scale", "0.005", "--runs", "1",
                "--steady", "0.1", "--steady-seconds", "2", "--steady-warm-up-seconds", "0", "--report",
                report.toString(), "--report-name", "tiny");
        assertThat(exit).isZero();
        String text = Files.readString(report.resolve("tiny.md"));
        // 2 transactions of 1,000 updates, 100 of 5 changes and the last row, counted by each case (pgsink's target
        // checked against the source)
        assertThat(BacklogBenchmark.Backlog.of(0.005).events()).isEqualTo(2_501);
        assertThat(text).contains("| source |", "| debezium |", "| pgsink |", "2,501 events");
        // the steady-state case found every probe row in the target, with its commit timestamp
        assertThat(text).contains("| steady 10% |");
    }

    @Test
    void servicesSplittingTheTablesReadTheWholeBacklog(@TempDir Path report)
            throws Exception
    {
        int exit = new CommandLine(new BacklogBenchmark("test")).execute("--scale", "0.005", "--runs", "1",
                "--tables", "2", "--cases", "pgsink,pgsink-split", "--report", report.toString(), "--report-name",
                "split");
        assertThat(exit).isZero();
        // each service's target checked against the source's table
        assertThat(Files.readString(report.resolve("split.md"))).contains("| pgsink |", "| pgsink-split |",
                "2,502 events");
    }
}
