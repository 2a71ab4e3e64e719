package io.pgsink.bench;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the macro benchmark once on tiny workloads, so CI catches a broken benchmark or a method
 * that leaves a wrong final state (each run verifies the target against the expected rows). It
 * times nothing.
 */
class FlushBenchmarkTest
{
    @Test
    void verify()
            throws Exception
    {
        TestingPostgreSqlServer server = TestingPostgreSqlServer.get();
        String url = server.jdbcUrl();
        if (server.properties().getProperty("user") != null) {
            url += (url.contains("?") ? "&" : "?") + "user=" + server.properties().getProperty("user") + "&password=" + server.properties().getProperty("password");
        }
        List<FlushBenchmark.Result> results = FlushBenchmark.run(url, "pgsink_bench_verify", 3_000, 2_000, 700, List.of("S1", "S2"), 7, "all", false);
        assertThat(results).extracting(FlushBenchmark.Result::scenario, FlushBenchmark.Result::method).containsExactly(
                org.assertj.core.groups.Tuple.tuple("S1 inserts", "pgsink (COPY + merge)"),
                org.assertj.core.groups.Tuple.tuple("S1 inserts", "JDBC executeBatch (rewrite)"),
                org.assertj.core.groups.Tuple.tuple("S1 inserts", "merged INSERT ON CONFLICT + DELETE"),
                org.assertj.core.groups.Tuple.tuple("S1 inserts", "raw COPY, unindexed table"),
                org.assertj.core.groups.Tuple.tuple("S2 mixed", "pgsink (COPY + merge)"),
                org.assertj.core.groups.Tuple.tuple("S2 mixed", "JDBC executeBatch (rewrite)"),
                org.assertj.core.groups.Tuple.tuple("S2 mixed", "merged INSERT ON CONFLICT + DELETE"));
        assertThat(results).allSatisfy(result -> assertThat(result.events()).isEqualTo(3_000));
        assertThat(FlushBenchmark.table(results)).contains("| S2 mixed | pgsink (COPY + merge) | 3,000 |").contains("1.00x");
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
        assertThat(workload.finalState).hasSize((int) (50_000 + inserts - deletes));
        long distinctUpdated = workload.changes.stream().filter(change -> change.kind() == Workload.Kind.UPDATE).mapToLong(Workload.Change::key).distinct().count();
        assertThat(distinctUpdated).as("some keys are updated repeatedly").isLessThan(updates);
    }
}
