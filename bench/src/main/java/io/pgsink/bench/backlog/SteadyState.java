package io.pgsink.bench.backlog;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The steady-state workload of {@link BacklogBenchmark}: transactions written at a fixed rate while
 * the service streams, and the lag of each from its commit in the source to the commit of the flush
 * that applied it in the target.
 *
 * <p>Each transaction makes 5 changes of {@code public.t}: 2 updates of the table's first half, an
 * insert of a <i>probe</i> row that nothing changes again, an insert of a <i>victim</i> row and the
 * delete of the previous transaction's victim. A probe's lag is the target's commit timestamp of the
 * row ({@code pg_xact_commit_timestamp(xmin)}) minus the source's; both databases are on one server,
 * so one clock, with {@code track_commit_timestamp=on}. The transactions are written by one
 * connection in ticks of 10 ms, each tick a {@code DO} block committing the transactions due by then.
 *
 * <p>Not thread-safe: one instance per measured run.
 */
final class SteadyState
{
    static final int CHANGES_PER_TRANSACTION = 5;
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final long rows;
    private final long firstId;

    /**
     * @param rows the table's initial rows: the updates touch ids 1 to rows / 2
     * @param firstId the first id this run's inserts use, above every id the table held or holds
     */
    SteadyState(long rows, long firstId)
    {
        this.rows = rows;
        this.firstId = firstId;
    }

    /** What a run wrote: transactions, the wall time over which it wrote them, and when it started. */
    record Written(long transactions, double seconds, long startedMillis) {}

    /**
     * Writes transactions at {@code transactionsPerSecond} for {@code seconds}, then one that inserts
     * {@code lastId}; returns what it wrote (fewer than the rate asks when the server cannot keep up).
     */
    Written write(String sourceUrl, double transactionsPerSecond, double seconds, long lastId)
            throws SQLException, InterruptedException
    {
        long half = rows / 2;
        long written = 0;
        long started = System.nanoTime();
        long startedMillis = System.currentTimeMillis();
        long end = started + (long) (seconds * 1e9);
        try (Connection connection = DriverManager.getConnection(sourceUrl);
                Statement statement = connection.createStatement()) {
            for (long tick = started; tick < end; tick += TICK_NANOS) {
                long due = (long) ((Math.min(System.nanoTime(), end) - started) / 1e9 * transactionsPerSecond);
                if (due > written) {
                    // transaction i: probe firstId + 2i, victim firstId + 2i + 1
                    statement.execute("DO $$ BEGIN FOR i IN " + written + ".." + (due - 1) + " LOOP "
                            + "UPDATE public.t SET qty = qty + 1, label = 'steady-' || i WHERE id = (2 * i) % " + half
                                    + " + 1; "
                            + "UPDATE public.t SET price = price + 1, active = NOT active, updated = clock_timestamp() "
                                    + "WHERE id = (2 * i + 1) % " + half + " + 1; "
                            + "INSERT INTO public.t VALUES (" + firstId + " + 2 * i, i % 100, 'probe-' || i, 1.5, "
                                    + "true, clock_timestamp()), (" + firstId + " + 2 * i + 1, 0, 'victim', 0, false, "
                                    + "clock_timestamp()); "
                            + "DELETE FROM public.t WHERE id = " + firstId + " + 2 * i - 1; "
                            + "COMMIT; END LOOP; END $$");
                    written = due;
                }
                long sleep = tick + TICK_NANOS - System.nanoTime();
                if (sleep > 0) {
                    TimeUnit.NANOSECONDS.sleep(sleep);
                }
            }
            double took = (System.nanoTime() - started) / 1e9;
            statement.execute("INSERT INTO public.t VALUES (" + lastId + ", 0, 'last', 0, true, now())");
            return new Written(written, took, startedMillis);
        }
    }

    /** Lag percentiles of the probes committed at least {@code warmUpSeconds} after the writing started. */
    record Lag(long probes, double p50Millis, double p99Millis, double maxMillis)
    {
        String describe()
        {
            return String.format(Locale.ROOT, "%,d probes, lag p50 %.0f ms, p99 %.0f ms, max %.0f ms", probes,
                    p50Millis, p99Millis, maxMillis);
        }
    }

    Lag lag(String sourceUrl, String targetUrl, Written written, double warmUpSeconds)
            throws SQLException
    {
        Map<Long, Long> source = commitMicros(sourceUrl, written.transactions());
        Map<Long, Long> target = commitMicros(targetUrl, written.transactions());
        long from = (written.startedMillis() + (long) (warmUpSeconds * 1000)) * 1000;
        List<Long> lags = new ArrayList<>();
        for (Map.Entry<Long, Long> probe : source.entrySet()) {
            Long applied = target.get(probe.getKey());
            if (applied == null) {
                throw new IllegalStateException("probe row " + probe.getKey() + " is missing in the target");
            }
            if (probe.getValue() >= from) {
                lags.add(applied - probe.getValue());
            }
        }
        if (lags.isEmpty()) {
            throw new IllegalStateException("no probe committed after the warm-up of " + warmUpSeconds + " s");
        }
        long[] sorted = lags.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return new Lag(sorted.length, percentile(sorted, 0.50) / 1e3, percentile(sorted, 0.99) / 1e3,
                sorted[sorted.length - 1] / 1e3);
    }

    private static double percentile(long[] sorted, double fraction)
    {
        return sorted[(int) Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
    }

    /** Probe id to its commit time in microseconds since the epoch. */
    private Map<Long, Long> commitMicros(String url, long transactions)
            throws SQLException
    {
        Map<Long, Long> commits = new HashMap<>();
        try (Connection connection = DriverManager.getConnection(url);
                PreparedStatement statement = connection.prepareStatement("SELECT id, (extract(epoch FROM "
                        + "pg_xact_commit_timestamp(xmin)) * 1000000)::bigint FROM public.t "
                        + "WHERE id >= ? AND id < ? AND (id - ?) % 2 = 0")) {
            statement.setLong(1, firstId);
            statement.setLong(2, firstId + 2 * transactions);
            statement.setLong(3, firstId);
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    long micros = result.getLong(2);
                    if (result.wasNull()) {
                        throw new IllegalStateException("no commit timestamp for row " + result.getLong(1) + " of "
                                + url + ": the server needs track_commit_timestamp=on");
                    }
                    commits.put(result.getLong(1), micros);
                }
            }
        }
        if (commits.size() != transactions) {
            throw new IllegalStateException(url + " holds " + commits.size() + " probe rows, expected "
                    + transactions);
        }
        return commits;
    }
}
