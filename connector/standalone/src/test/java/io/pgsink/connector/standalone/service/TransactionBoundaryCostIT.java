package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.engine.FlushBoundary;
import io.pgsink.copy.testing.Poll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A measurement, not a test of speed (it asserts only that the target equals the source): how fast
 * the standalone service catches up on a backlog of {@link TransferWorkload} transactions with
 * {@code flush.boundary=transaction} relative to {@code batch}, default flush settings, in the same
 * run, alternating, on fresh databases each time. Runs only with {@code -Dpgsink.measure=true}:
 * <pre>
 * ./mvnw -B verify -pl connector/standalone -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=TransactionBoundaryCostIT -Dfailsafe.failIfNoSpecifiedTests=false -Dpgsink.measure=true
 * </pre>
 * The clock runs from the moment the target shows the backlog's first transaction to the moment it
 * shows its last (a sentinel row), so the engine's start is not counted.
 */
class TransactionBoundaryCostIT
{
    private static final String SENTINEL_TABLE = "CREATE TABLE public.sentinel (id integer PRIMARY KEY, step integer NOT NULL)";
    private static final Duration TIMEOUT = Duration.ofMinutes(10);
    private static final int ROUNDS = Integer.getInteger("pgsink.measure.rounds", 3);
    private static final int SMALL_TRANSACTIONS = Integer.getInteger("pgsink.measure.transactions", 4000);

    @Test
    void catchUpRateWithTransactionBoundariesRelativeToBatchBoundaries()
            throws Exception
    {
        assumeTrue(Boolean.getBoolean("pgsink.measure"), "a measurement: run with -Dpgsink.measure=true");
        Map<FlushBoundary, List<Double>> rates = new EnumMap<>(FlushBoundary.class);
        for (int round = 0; round < ROUNDS; round++) {
            for (FlushBoundary boundary : round % 2 == 0 ? List.of(FlushBoundary.BATCH, FlushBoundary.TRANSACTION) : List.of(FlushBoundary.TRANSACTION, FlushBoundary.BATCH)) {
                double rate = catchUp(boundary);
                rates.computeIfAbsent(boundary, key -> new ArrayList<>()).add(rate);
                System.out.printf(Locale.ROOT, "TransactionBoundaryCostIT: round %d %s: %.0f events/s%n", round + 1, boundary, rate);
            }
        }
        List<Double> ratios = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            ratios.add(rates.get(FlushBoundary.TRANSACTION).get(round) / rates.get(FlushBoundary.BATCH).get(round));
        }
        System.out.printf(Locale.ROOT, "TransactionBoundaryCostIT: transaction/batch catch-up rate per round %s, min %.2f, max %.2f%n",
                ratios.stream().map(ratio -> String.format(Locale.ROOT, "%.2f", ratio)).toList(),
                ratios.stream().mapToDouble(Double::doubleValue).min().orElseThrow(), ratios.stream().mapToDouble(Double::doubleValue).max().orElseThrow());
    }

    /** Streams a backlog built while the service was stopped; returns change events applied per second. */
    private double catchUp(FlushBoundary boundary)
            throws Exception
    {
        try (TestingPipeline pipeline = TestingPipeline.create("txcost")) {
            TestingDatabase source = pipeline.source();
            TestingDatabase target = pipeline.target();
            source.execute(TransferWorkload.CREATE_TABLES);
            source.execute(SENTINEL_TABLE);
            target.execute(SENTINEL_TABLE);
            source.execute("ALTER TABLE public.accounts_a REPLICA IDENTITY FULL", "ALTER TABLE public.accounts_b REPLICA IDENTITY FULL");
            target.execute(TransferWorkload.CREATE_TABLES);
            Map<String, String> properties = pipeline.properties("public.accounts_a,public.accounts_b,public.sentinel");
            // the default flush interval: the rate measured is the sink's own
            properties.remove("flush.interval.ms");
            properties.put("flush.boundary", boundary.name().toLowerCase(Locale.ROOT));
            properties.put("progress.interval.ms", "0");
            long events;
            try (Connection connection = source.connect()) {
                TransferWorkload workload = new TransferWorkload(connection, 11);
                workload.seed();
                sentinel(connection, "INSERT INTO public.sentinel VALUES (0, 0)");
                // creates the slot and copies the accounts; the backlog is written while it is stopped
                try (RunningService running = RunningService.start(properties)) {
                    // loaded and streaming: a change made after the load is in the target
                    awaitSentinel(target, running::assertRunning, 0);
                    RunningService.await("the initial load", TIMEOUT, () -> {
                        running.assertRunning();
                        try (Connection targetConnection = target.connect()) {
                            assertThat(TransferWorkload.single(targetConnection, "SELECT (SELECT count(*) FROM public.accounts_a) + (SELECT count(*) FROM public.accounts_b)"))
                                    .isEqualTo(2L * TransferWorkload.ACCOUNTS);
                        }
                    });
                    sentinel(connection, "UPDATE public.sentinel SET step = 1");
                    awaitSentinel(target, running::assertRunning, 1);
                }
                sentinel(connection, "UPDATE public.sentinel SET step = 2");
                for (int i = 0; i < SMALL_TRANSACTIONS; i++) {
                    workload.smallTransaction();
                    if (i % 200 == 199) {
                        workload.largeTransaction(10);
                    }
                }
                sentinel(connection, "UPDATE public.sentinel SET step = 3");
                events = workload.events() + 2;
            }
            try (RunningService running = RunningService.start(properties)) {
                awaitSentinel(target, running::assertRunning, 2);
                long start = System.nanoTime();
                awaitSentinel(target, running::assertRunning, 3);
                double seconds = (System.nanoTime() - start) / 1e9;
                try (Connection sourceConnection = source.connect(); Connection targetConnection = target.connect()) {
                    assertThat(TransferWorkload.checksum(targetConnection)).as(() -> "rows that differ: " + TransferWorkload.differences(source, target))
                            .isEqualTo(TransferWorkload.checksum(sourceConnection));
                }
                return events / seconds;
            }
        }
    }

    private static void sentinel(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
        connection.commit();
    }

    /** Waits, polling every few milliseconds, until the sentinel's step is at least {@code balance}. */
    private static void awaitSentinel(TestingDatabase target, RunningService.Check running, long balance)
            throws Exception
    {
        try (Connection connection = target.connect()) {
            // a failed read (SQLException) is retried
            Poll.until("the target to show sentinel " + balance, TIMEOUT, Duration.ofMillis(5), () -> {
                running.run();
                assertThat(TransferWorkload.single(connection, "SELECT coalesce(max(step), -1) FROM public.sentinel")).isGreaterThanOrEqualTo(balance);
            });
        }
    }
}
