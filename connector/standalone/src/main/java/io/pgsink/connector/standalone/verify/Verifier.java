package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.TargetDialect;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.schema.LoadTargets;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.verify.ChunkHash;
import io.pgsink.merge.verify.MisplacedRows;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static java.util.Objects.requireNonNull;

/**
 * {@code pgsink verify}: compares every captured source table ({@link VerifyPlanner}) with its
 * target table by key ranges. The source's keys, in key order, are cut into ranges of
 * {@link VerifyOptions#chunkRows} rows ({@link VerifyOptions#distributedRangeRows} on a target that
 * distributes its tables: Greenplum), the boundaries read with a keyset cursor and reused on the
 * target; {@link VerifyOptions#parallelism} workers, each with a source and a target connection,
 * compare the ranges ({@link ChunkComparer}) as soon as they are cut; then the differing keys are re-checked
 * ({@link Recheck}), so that a key that only differed because the sink had not applied the latest
 * changes yet is not reported. On a target that distributes its tables, each table is also searched for
 * rows on a segment that does not own their key, while the ranges are compared ({@link MisplacedRows}).
 * Reads only, on both sides, but for that search's temporary tables.
 *
 * <p>{@link #run} runs on the caller's thread, which waits for the workers.
 */
public final class Verifier
{
    private static final Logger log = LoggerFactory.getLogger(Verifier.class);
    private static final long PROGRESS_INTERVAL_NANOS = 10_000_000_000L;
    private static final int QUEUED_RANGES = 64;

    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;
    private final VerifyListener listener;

    public Verifier(LoadSettings settings, TargetConnector target, VerifyOptions options)
    {
        this(settings, target, options, VerifyListener.NONE);
    }

    /** @param listener told of each table's progress (the metrics of {@code pgsink verify --http-port}) */
    public Verifier(LoadSettings settings, TargetConnector target, VerifyOptions options, VerifyListener listener)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
        this.listener = requireNonNull(listener, "listener is null");
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
        ExecutorService searcher = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-verify-placement");
            thread.setDaemon(true);
            return thread;
        });
        Future<List<MisplacedRows.Found>> misplaced;
        try (Connection source = connectSource(); Connection targetConnection = connectTarget()) {
            ChunkHash hash = ChunkHash.common(source, targetConnection);
            boolean distributes = LoadTargets.dialect(targetConnection, settings.sink().targetDialect())
                    .distribution().distributes();
            long rangeRows = distributes ? options.distributedRangeRows() : options.chunkRows();
            targetConnection.setAutoCommit(false);
            List<TablePair> pairs = VerifyPlanner.plan(source, targetConnection, settings);
            targetConnection.setAutoCommit(true);
            log.info("{} - verifying {} table(s) in key ranges of up to {} rows, parallelism {}, chunk hash {}"
                    + " (planned in {} ms)", settings.sink().sinkName(), pairs.size(), rangeRows,
                    options.parallelism(), hash, (System.nanoTime() - start) / 1_000_000);
            for (TablePair pair : pairs) {
                results.add(new TableResult(pair, options.maxKeys()));
            }
            // on its own thread and connection, while the ranges are compared
            misplaced = distributes ? searcher.submit(() -> findMisplaced(results))
                    : CompletableFuture.completedFuture(List.of());
            compare(source, results, hash, rangeRows);
        }
        catch (SQLException e) {
            searcher.shutdownNow();
            throw SqlFailures.translate(e, "Cannot read the captured tables to verify");
        }
        catch (RuntimeException | InterruptedException e) {
            searcher.shutdownNow();
            throw e;
        }
        String recheck;
        try {
            recheck = new Recheck(settings, target, options).run(results);
            List<MisplacedRows.Found> found = misplaced.get();
            for (int i = 0; i < found.size(); i++) {
                results.get(i).misplaced(found.get(i).keys(), found.get(i).count());
            }
        }
        catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new IllegalStateException(e.getCause());
        }
        finally {
            searcher.shutdownNow();
        }
        List<TableReport> reports = results.stream().map(TableResult::report).toList();
        return new VerifyReport(reports, (System.nanoTime() - start) / 1_000_000, recheck);
    }

    /**
     * On a target that distributes its tables (Greenplum), the keys of each table's rows that sit on a
     * segment that does not own their key ({@link MisplacedRows}), in the order of {@code results}:
     * with values equal to the source's, the comparison by key cannot see them. They need no re-check:
     * a row written through the coordinator is on its owner, so the source's changes never make one,
     * and one statement reads each table. A table distributed randomly has no owner to miss, a
     * replicated one is read from one segment: neither is searched.
     */
    private List<MisplacedRows.Found> findMisplaced(List<TableResult> results)
    {
        List<MisplacedRows.Found> found = new ArrayList<>();
        TableId current = null;
        try (Connection connection = connectTarget()) {
            Dialect dialect = LoadTargets.dialect(connection, settings.sink().targetDialect());
            for (TableResult result : results) {
                current = result.table().targetTable();
                List<String> distributionKey = LoadTargets.read(connection, dialect, current)
                        .map(TargetTable::distributionKey).orElse(List.of());
                long start = System.nanoTime();
                MisplacedRows.Found table = MisplacedRows.find(connection, result.table().target(), distributionKey,
                        options.maxKeys());
                found.add(table);
                if (!table.searched()) {
                    log.warn("{} - {}: not searched for rows on a segment that does not own their key: it is not"
                            + " hashed over every segment with its columns' default hash operator classes",
                            settings.sink().sinkName(), result.table().describe());
                    continue;
                }
                log.info("{} - {}: {} row(s) on a segment that does not own their key, searched in {} ms",
                        settings.sink().sinkName(), result.table().describe(), table.count(),
                        (System.nanoTime() - start) / 1_000_000);
            }
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, current == null ? "Cannot connect to verify"
                    : "Cannot search " + current + " for rows on a segment that does not own their key");
        }
        return found;
    }

    /**
     * Cuts the tables into key ranges on this thread while the workers already compare the ranges
     * cut so far: the cut (an index scan of the source's keys) overlaps the comparison.
     */
    private void compare(Connection source, List<TableResult> results, ChunkHash hash, long rangeRows)
            throws InterruptedException, SQLException
    {
        // bounded, so that a table of any size is cut no further ahead than the workers compare
        BlockingQueue<Optional<Task>> tasks = new LinkedBlockingQueue<>(QUEUED_RANGES);
        ExecutorService workers = Executors.newFixedThreadPool(options.parallelism(), runnable -> {
            Thread thread = new Thread(runnable, "pgsink-verify");
            thread.setDaemon(true);
            return thread;
        });
        try {
            List<Future<Void>> futures = new ArrayList<>();
            for (int i = 0; i < options.parallelism(); i++) {
                futures.add(workers.submit(() -> {
                    work(tasks, hash);
                    return null;
                }));
            }
            boolean cut = true;
            for (TableResult result : results) {
                cut = cut && cut(source, result, tasks, futures, rangeRows);
            }
            if (cut) {
                for (int i = 0; i < options.parallelism(); i++) {
                    tasks.put(Optional.empty());
                }
            }
            for (Future<Void> future : futures) {
                try {
                    future.get();
                }
                catch (ExecutionException e) {
                    tasks.clear();
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

    /**
     * Queues the source's keys of a table cut into ranges: a boundary every {@code rangeRows} keys, the
     * last range open. Returns false, having stopped, when a worker ended (a worker ends early only
     * when it fails).
     */
    private boolean cut(Connection source, TableResult result, BlockingQueue<Optional<Task>> tasks,
            List<Future<Void>> workers, long rangeRows)
            throws SQLException, InterruptedException
    {
        TablePair pair = result.table();
        long start = System.nanoTime();
        result.started(start);
        result.report(listener, start);
        Optional<List<String>> lower = Optional.empty();
        int ranges = 0;
        while (true) {
            Optional<List<String>> upper = ChunkComparer.nextBoundary(source, pair.source(), lower, Optional.empty(),
                    rangeRows - 1);
            ranges++;
            if (upper.isEmpty()) {
                // before the last range is queued, so that its worker knows it is the last
                result.cut(ranges);
                result.report(listener, System.nanoTime());
            }
            Optional<Task> task = Optional.of(new Task(new KeyRange(pair, lower, upper), result));
            while (!tasks.offer(task, 100, TimeUnit.MILLISECONDS)) {
                if (workers.stream().anyMatch(Future::isDone)) {
                    return false;
                }
            }
            if (upper.isEmpty()) {
                return true;
            }
            lower = upper;
        }
    }

    private void work(BlockingQueue<Optional<Task>> tasks, ChunkHash hash)
            throws InterruptedException
    {
        Task task = null;
        ExecutorService targetThread = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-verify-target");
            thread.setDaemon(true);
            return thread;
        });
        try (Connection source = connectSource(); Connection targetConnection = connectTarget()) {
            ChunkComparer comparer = new ChunkComparer(source, targetConnection, options.chunkRows(), hash,
                    targetThread);
            Optional<Task> next;
            while ((next = tasks.take()).isPresent()) {
                task = next.get();
                comparer.compare(task.range(), task.result());
                long now = System.nanoTime();
                task.result().rangeDone(now, PROGRESS_INTERVAL_NANOS)
                        .ifPresent(line -> log.info("{} - {}", settings.sink().sinkName(), line));
                task.result().report(listener, now);
            }
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, task == null
                    ? "Cannot connect to verify"
                    : "Cannot compare " + task.range().table().describe());
        }
        finally {
            targetThread.shutdownNow();
        }
    }

    /** A key range to compare, and where its result goes. */
    private record Task(KeyRange range, TableResult result) {}

    Connection connectSource()
            throws SQLException
    {
        return settled(settings.source().connect("pgsink verify", false));
    }

    Connection connectTarget()
            throws SQLException
    {
        return settledTarget(target.connect(), settings.sink().targetDialect());
    }

    /**
     * A target connection {@link #settled}, on which a lookup by key reads every segment of a
     * distributing target ({@link io.pgsink.merge.dialect.DistributionSql#everySegmentSession}):
     * the re-check then sees the copies of a key that the comparison of its range saw.
     */
    static Connection settledTarget(Connection connection, TargetDialect setting)
            throws SQLException
    {
        Dialect dialect;
        try {
            dialect = LoadTargets.dialect(settled(connection), setting);
        }
        catch (SQLException | RuntimeException e) {
            try {
                connection.close();
            }
            catch (SQLException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
        return withSession(connection, dialect.distribution().everySegmentSession().toArray(String[]::new));
    }

    /** Values print alike on both servers ({@link LoadSettings#SESSION_SETTINGS}), whatever their defaults. */
    static Connection settled(Connection connection)
            throws SQLException
    {
        return withSession(connection, LoadSettings.SESSION_SETTINGS.split("; "));
    }

    /** Runs {@code statements} on {@code connection}; closes it when one fails. */
    static Connection withSession(Connection connection, String... statements)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String setting : statements) {
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
