package io.pgsink.bench.flush;

import io.pgsink.bench.support.BenchmarkDatabase;
import io.pgsink.bench.workload.Workload;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.MergeApplier;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What history tables and metadata columns cost against pgsink's default, on one workload in one
 * run: the mixed stream S2 (inserts, updates and deletes of a table that has {@code --base-rows}
 * rows) applied by
 * <ul>
 * <li>pgsink as configured out of the box (merged by key: MERGE on PostgreSQL 15+),</li>
 * <li>the same with the four metadata columns,</li>
 * <li>a history table ({@code table.mode=history}): every event appended by COPY, with operation and position.</li>
 * </ul>
 * The modes take turns, {@code runs} times, so that the machine's drift hits them alike; each run
 * checks what the mode left (the expected rows of the merged table, one row per event of the
 * history). Prints seconds per mode and run, and each run's ratio of events/s to the default's.
 *
 * <p>{@code java -cp bench/target/benchmarks.jar io.pgsink.bench.flush.HistoryBenchmark [url] [events] [base rows]
 * [batch] [runs]}
 */
public final class HistoryBenchmark
{
    private static final Map<String, String> METADATA = Map.of(
            SinkConfig.METADATA_OPERATION_COLUMN, "_op",
            SinkConfig.METADATA_SOURCE_TIMESTAMP_COLUMN, "_committed_at",
            SinkConfig.METADATA_SOURCE_POSITION_COLUMN, "_position",
            SinkConfig.METADATA_APPLIED_TIMESTAMP_COLUMN, "_applied_at");
    private static final String METADATA_COLUMNS = "_op text, _committed_at timestamptz, _position text, _applied_at "
            + "timestamptz";

    private enum Mode
    {
        MERGE("pgsink default (merge)"),
        MERGE_WITH_METADATA("merge + 4 metadata columns"),
        HISTORY("history table (table.mode=history)");

        final String label;

        Mode(String label)
        {
            this.label = label;
        }
    }

    private HistoryBenchmark() {}

    public static void main(String[] args)
            throws Exception
    {
        String url = args.length > 0 ? args[0] : System.getenv().getOrDefault("PGSINK_TEST_JDBC_URL",
                "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        long events = args.length > 1 ? Long.parseLong(args[1]) : 200_000;
        long baseRows = args.length > 2 ? Long.parseLong(args[2]) : 100_000;
        int batch = args.length > 3 ? Integer.parseInt(args[3]) : 10_000;
        int runs = args.length > 4 ? Integer.parseInt(args[4]) : 3;
        Workload workload = Workload.mixed(events, baseRows, 42);
        try (BenchmarkDatabase database = new BenchmarkDatabase(url, "pgsink_history_bench")) {
            workload.createExpected(database, "expected");
            String expected = FlushBenchmark.checksum(database, "expected");
            // warm-up: each mode once on a small stream, untimed
            Workload warmUp = Workload.mixed("warm-up", workload.columns, 20_000, 20_000, 43);
            for (Mode mode : Mode.values()) {
                apply(database, mode, warmUp, batch);
            }
            Map<Mode, List<Double>> seconds = new HashMap<>();
            for (int run = 1; run <= runs; run++) {
                for (Mode mode : Mode.values()) {
                    double elapsed = apply(database, mode, workload, batch);
                    check(database, mode, workload, expected);
                    seconds.computeIfAbsent(mode, ignored -> new ArrayList<>()).add(elapsed);
                    System.out.printf(Locale.ROOT, "run %d  %-40s %7.2f s %,10.0f events/s%n", run, mode.label, elapsed,
                            events / elapsed);
                }
            }
            System.out.printf(Locale.ROOT,
                    "%n%,d events (S2 mixed, %,d base rows), %,d events per flush, %d runs; events/s relative to the "
                    + "default in the same run:%n", events, baseRows, batch, runs);
            for (Mode mode : Mode.values()) {
                List<String> ratios = new ArrayList<>();
                for (int run = 0; run < runs; run++) {
                    ratios.add(String.format(Locale.ROOT, "%.2fx", seconds.get(Mode.MERGE).get(run)
                            / seconds.get(mode).get(run)));
                }
                System.out.printf(Locale.ROOT, "  %-40s %s%n", mode.label, String.join(", ", ratios));
            }
        }
    }

    /** Applies the workload to a fresh target table as {@code mode} writes it; returns the seconds the sink took. */
    private static double apply(BenchmarkDatabase database, Mode mode, Workload workload, int batch)
            throws SQLException
    {
        String table = "target_" + mode.name().toLowerCase(Locale.ROOT);
        String columns = workload.columns.definitions(mode != Mode.HISTORY) + (mode == Mode.MERGE ? "" : ", "
                + METADATA_COLUMNS);
        database.execute("DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (" + columns + ")");
        if (workload.baseRows > 0) {
            database.execute(workload.columns.baseRowsSql(table, 1, workload.baseRows));
        }
        database.execute("VACUUM ANALYZE " + table, "CHECKPOINT");
        Map<String, String> properties = new HashMap<>();
        properties.put(SinkConfig.TARGET_URL, database.url);
        properties.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, database.schema + "." + table);
        properties.put(SinkConfig.OFFSETS_SCHEMA, database.schema);
        properties.put(SinkConfig.SINK_NAME, table);
        properties.put(SinkConfig.FLUSH_MAX_EVENTS, String.valueOf(batch));
        properties.put(SinkConfig.BUFFER_MAX_BYTES, String.valueOf(Long.MAX_VALUE));
        properties.put(SinkConfig.FLUSH_INTERVAL_MS, "3600000");
        if (mode != Mode.MERGE) {
            properties.putAll(METADATA);
        }
        if (mode == Mode.HISTORY) {
            properties.put(SinkConfig.TABLE_MODE, "history");
        }
        SinkConfig config = SinkConfig.parse(properties);
        System.gc();
        long start = System.nanoTime();
        try (BufferedSink sink = new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config))) {
            PgsinkMethod.replay(table, workload, sink);
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private static void check(BenchmarkDatabase database, Mode mode, Workload workload, String expected)
            throws SQLException
    {
        String table = "target_" + mode.name().toLowerCase(Locale.ROOT);
        if (mode == Mode.HISTORY) {
            database.execute("DO $$ BEGIN IF (SELECT count(*) FROM " + table + " WHERE _op IS NOT NULL) <> "
                    + workload.changes.size()
                    + " THEN RAISE EXCEPTION 'history has the wrong number of rows'; END IF; END $$");
            return;
        }
        String actual = FlushBenchmark.checksum(database, "(SELECT " + workload.columns.nameList() + " FROM " + table
                + ") AS");
        if (!actual.equals(expected)) {
            throw new IllegalStateException(mode.label + " left a wrong final state: " + actual + ", expected "
                    + expected);
        }
    }
}
