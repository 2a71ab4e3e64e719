package io.pgsink.bench.flush;

import io.pgsink.bench.support.TestingBenchmarkDatabase;
import io.pgsink.bench.workload.Columns;
import io.pgsink.bench.workload.Workload;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

/**
 * Runs the macro benchmark once on tiny workloads, every suite and method, so CI catches a broken
 * benchmark or a method that leaves a wrong final state (each run checks the target against the
 * expected rows). It times nothing: the numbers it produces are not looked at.
 */
class FlushBenchmarkTest
{
    @Test
    void verify(@org.junit.jupiter.api.io.TempDir Path reports)
            throws Exception
    {
        FlushBenchmark.Options options = new FlushBenchmark.Options(TestingBenchmarkDatabase.url(), "pgsink_bench_verify", List.of("headline", "scaling", "small"), 3_000, 2_000, 700,
                List.of("S1", "S2", "S2W"), 7, "all", 600, 300, List.of(500), List.of(4_000L), 5, 40, false);
        List<FlushBenchmark.Result> results = FlushBenchmark.run(options);
        String pgsink = PgsinkMethod.NAME;
        String connect = "pgsink (Connect records)";
        String deleteInsert = PgsinkMethod.DELETE_INSERT_NAME;
        String binary = PgsinkMethod.BINARY_NAME;
        String pipelined = PgsinkMethod.PIPELINED_NAME;
        String jdbc = "JDBC executeBatch (rewrite)";
        String merged = "merged INSERT ON CONFLICT + DELETE";
        String debezium = "Debezium JDBC sink 3.6 (upsert, UNNEST)";
        assertThat(results).filteredOn(result -> result.suite().equals("headline")).extracting(FlushBenchmark.Result::scenario, FlushBenchmark.Result::method).containsExactly(
                tuple("S1 inserts", pgsink), tuple("S1 inserts", pipelined), tuple("S1 inserts", connect), tuple("S1 inserts", binary), tuple("S1 inserts", jdbc), tuple("S1 inserts", merged), tuple("S1 inserts", debezium),
                tuple("S1 inserts", "raw COPY, unindexed table"), tuple("S1 inserts", "raw COPY, indexed table"),
                tuple("S2 mixed", pgsink), tuple("S2 mixed", pipelined), tuple("S2 mixed", connect), tuple("S2 mixed", deleteInsert), tuple("S2 mixed", binary), tuple("S2 mixed", jdbc), tuple("S2 mixed", merged), tuple("S2 mixed", debezium),
                tuple("S2W wide mixed", pgsink), tuple("S2W wide mixed", pipelined), tuple("S2W wide mixed", connect), tuple("S2W wide mixed", deleteInsert),
                tuple("S2W wide mixed", binary), tuple("S2W wide mixed", jdbc), tuple("S2W wide mixed", merged),
                tuple("S2W wide mixed", debezium));
        assertThat(results).filteredOn(result -> result.suite().equals("scaling")).extracting(FlushBenchmark.Result::batch, FlushBenchmark.Result::baseRows, FlushBenchmark.Result::method)
                .containsExactly(
                        tuple(500, 2_000L, pgsink), tuple(500, 2_000L, merged), tuple(500, 2_000L, debezium),
                        tuple(700, 4_000L, pgsink), tuple(700, 4_000L, merged), tuple(700, 4_000L, debezium));
        assertThat(results).filteredOn(result -> result.suite().equals("small")).extracting(FlushBenchmark.Result::method)
                .containsExactly(pgsink, PgsinkMethod.COPY_ONLY_NAME, PgsinkMethod.DELETE_INSERT_NAME, "prototype: pgsink merge + DELETE ANY/INSERT UNNEST", jdbc, merged, debezium);
        assertThat(results).filteredOn(result -> result.suite().equals("small"))
                .allSatisfy(result -> assertThat(result.roundTrips()).as("round trips of %s", result.method()).isGreaterThanOrEqualTo(result.flushes()));
        assertThat(results).filteredOn(result -> !result.suite().equals("small")).allSatisfy(result -> assertThat(result.roundTrips()).isNaN());
        assertThat(results).filteredOn(result -> result.suite().equals("headline") && !result.scenario().startsWith("S2W"))
                .allSatisfy(result -> assertThat(result.events()).isEqualTo(3_000));

        assertThat(FlushBenchmark.table(results)).contains("| S2 mixed | pgsink (COPY + merge) | 3,000 |").contains("1.00x");
        List<Path> written = MacroReport.write(reports, "report", "java ... FlushBenchmark", options, "0.00, 0.00, 0.00", results);
        assertThat(written).containsExactly(reports.resolve("report.md"), reports.resolve("report.svg"));
        assertThat(Files.readString(reports.resolve("report.md")))
                .contains("## Headline", "## Targets", "S2: pgsink ≥ 4× the Debezium JDBC sink", "## Scaling", "## Small flushes", "## Final-state checksums");
        assertThat(Files.readString(reports.resolve("report.svg"))).startsWith("<svg").contains("S2W wide mixed").endsWith("</svg>\n");
    }

    @Test
    void workloadHasTheAdvertisedMix()
    {
        Workload workload = Workload.mixed(100_000, 50_000, 42);
        long inserts = workload.changes.stream().filter(change -> change.kind() == Workload.Kind.INSERT).count();
        long updates = workload.changes.stream().filter(change -> change.kind() == Workload.Kind.UPDATE).count();
        long deletes = workload.changes.stream().filter(change -> change.kind() == Workload.Kind.DELETE).count();
        assertThat(inserts).isBetween(49_000L, 51_000L);
        assertThat(updates).isBetween(34_000L, 36_000L);
        assertThat(deletes).isBetween(14_000L, 16_000L);
        assertThat(workload.finalRowCount()).isEqualTo(50_000 + inserts - deletes);
        assertThat(workload.finalRows()).hasSize((int) workload.finalRowCount());
        long distinctUpdated = workload.changes.stream().filter(change -> change.kind() == Workload.Kind.UPDATE).mapToLong(Workload.Change::key).distinct().count();
        assertThat(distinctUpdated).as("some keys are updated repeatedly").isLessThan(updates);
    }

    @Test
    void wideRowsHaveThirtyColumnsAndLargeText()
    {
        Object[] row = Columns.WIDE.randomRow(new Random(1), 7);
        assertThat(Columns.WIDE.size()).isEqualTo(30);
        assertThat(row).hasSize(30);
        assertThat(Columns.WIDE.columns).filteredOn(column -> column.kind() == Columns.Kind.LARGE_TEXT).hasSize(3);
        assertThat(Columns.WIDE.columns).extracting(Columns.Column::kind).contains(Columns.Kind.TIMESTAMPTZ, Columns.Kind.DOUBLE, Columns.Kind.NUMERIC, Columns.Kind.BOOLEAN);
        assertThat(row[0]).isEqualTo(7L);
        assertThat(row).hasAtLeastOneElementOfType(OffsetDateTime.class).hasAtLeastOneElementOfType(BigDecimal.class);
    }
}
