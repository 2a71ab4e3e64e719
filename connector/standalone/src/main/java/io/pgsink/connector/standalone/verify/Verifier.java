package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.session.TargetConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static java.util.Objects.requireNonNull;

/**
 * {@code pgsink verify}: compares every captured source table ({@link VerifyPlanner}) with its
 * target table by key ranges. The source's keys, in key order, are cut into ranges of
 * {@link VerifyOptions#chunkRows} rows (the boundaries read with a keyset cursor, and reused on the
 * target); {@link VerifyOptions#parallelism} workers, each with a source and a target connection,
 * compare the ranges ({@link ChunkComparer}); then the differing keys are re-checked
 * ({@link Recheck}), so that a key that only differed because the sink had not applied the latest
 * changes yet is not reported. Reads only, on both sides.
 *
 * <p>{@link #run} runs on the caller's thread, which waits for the workers.
 */
public final class Verifier
{
    private static final Logger log = LoggerFactory.getLogger(Verifier.class);

    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;

    public Verifier(LoadSettings settings, TargetConnector target, VerifyOptions options)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
    }

    /**
     * @throws SinkException ({@link io.pgsink.core.error.ErrorCode#CONFIG}) when a table cannot be
     *         compared, or when a database cannot be read
     */
    public VerifyReport run()
            throws InterruptedException
    {
        long start = System.nanoTime();
        List<TableResult> results = new ArrayList<>();
        Queue<KeyRange> ranges = new ConcurrentLinkedQueue<>();
        try (Connection source = connectSource(); Connection targetConnection = connectTarget()) {
            targetConnection.setAutoCommit(false);
            for (TablePair pair : VerifyPlanner.plan(source, targetConnection, settings)) {
                TableResult result = new TableResult(pair, options.maxKeys());
                results.add(result);
                ranges.addAll(ranges(source, pair));
            }
            targetConnection.setAutoCommit(true);
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, "Cannot read the captured tables to verify");
        }
        log.info("{} - verifying {} table(s) in {} key range(s) of up to {} rows, parallelism {}",
                settings.sink().sinkName(),
                results.size(), ranges.size(), options.chunkRows(), options.parallelism());
        compare(ranges, results);
        String recheck = new Recheck(settings, target, options).run(results);
        List<TableReport> reports = results.stream().map(TableResult::report).toList();
        return new VerifyReport(reports, (System.nanoTime() - start) / 1_000_000, recheck);
    }

    /** The source's keys cut into ranges: a boundary every {@code chunkRows} keys, the last range open. */
    private List<KeyRange> ranges(Connection source, TablePair pair)
            throws SQLException
    {
        List<KeyRange> ranges = new ArrayList<>();
        Optional<List<String>> lower = Optional.empty();
        while (true) {
            Optional<List<String>> upper = ChunkComparer.nextBoundary(source, pair.source(), lower, Optional.empty(),
                    options.chunkRows() - 1);
            ranges.add(new KeyRange(pair, lower, upper));
            if (upper.isEmpty()) {
                return ranges;
            }
            lower = upper;
        }
    }

    private void compare(Queue<KeyRange> ranges, List<TableResult> results)
            throws InterruptedException
    {
        ExecutorService workers = Executors.newFixedThreadPool(options.parallelism(), runnable -> {
            Thread thread = new Thread(runnable, "pgsink-verify");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<Void>> futures = new ArrayList<>();
            for (int i = 0; i < options.parallelism(); i++) {
                futures.add(workers.submit(() -> {
                    work(ranges, results);
                    return null;
                }));
            }
            for (Future<Void> future : futures) {
                try {
                    future.get();
                }
                catch (ExecutionException e) {
                    ranges.clear();
                    if (e.getCause() instanceof RuntimeException runtime) {
                        throw runtime;
                    }
                    throw new IllegalStateException(e.getCause());
                }
            }
        }
        finally {
            workers.shutdownNow();
        }
    }

    private void work(Queue<KeyRange> ranges, List<TableResult> results)
    {
        KeyRange range = null;
        try (Connection source = connectSource(); Connection targetConnection = connectTarget()) {
            ChunkComparer comparer = new ChunkComparer(source, targetConnection, options.chunkRows());
            while ((range = ranges.poll()) != null) {
                KeyRange current = range;
                TableResult result = results.stream().filter(each -> each.table() == current.table()).findFirst()
                        .orElseThrow();
                comparer.compare(range, result);
            }
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, range == null
                    ? "Cannot connect to verify"
                    : "Cannot compare " + range.table().describe());
        }
    }

    Connection connectSource()
            throws SQLException
    {
        return settled(settings.source().connect("pgsink verify", false));
    }

    Connection connectTarget()
            throws SQLException
    {
        return settled(target.connect());
    }

    /** Values print alike on both servers ({@link LoadSettings#SESSION_SETTINGS}), whatever their defaults. */
    static Connection settled(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String setting : LoadSettings.SESSION_SETTINGS.split("; ")) {
                statement.execute(setting);
            }
        }
        catch (SQLException e) {
            try {
                connection.close();
            }
            catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return connection;
    }
}
