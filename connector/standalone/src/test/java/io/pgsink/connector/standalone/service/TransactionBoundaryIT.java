package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;

import io.pgsink.connector.standalone.engine.FlushBoundary;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code flush.boundary}: through the real Debezium engine, a workload of transfers between two
 * tables ({@link TransferWorkload}, the sum of all balances constant in every source transaction,
 * some transactions far larger than {@code flush.max.events}) streams into the target while a reader
 * polls the target's sum, and a deferred trigger on the target records the sum every flush
 * transaction commits. With {@code transaction} boundaries no committed target state and no read
 * may show another sum; with {@code batch} boundaries a flush does commit part of a large transaction
 * (deterministic: the event limit cuts it), which is what the option is for. A SIGKILL of the
 * service (its own JVM) while it is inside a large transaction keeps the guarantee, and after a
 * restart the target equals the source.
 */
class TransactionBoundaryIT
{
    // generous: a machine shared with other builds can be ten times slower than an idle one
    private static final Duration TIMEOUT = Duration.ofMinutes(5);
    private static final Pattern EVENTS_IN = Pattern.compile("(?m)^pgsink_events_in_total\\{[^}]*} ([0-9.E]+)$");

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("tx");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute(TransferWorkload.CREATE_TABLES);
        source.execute("ALTER TABLE public.accounts_a REPLICA IDENTITY FULL", "ALTER TABLE public.accounts_b REPLICA IDENTITY FULL");
        target.execute(TransferWorkload.CREATE_TABLES);
        try (Connection connection = source.connect()) {
            new TransferWorkload(connection, 1).seed();
        }
    }

    @Test
    void transactionBoundariesCommitOnlyWholeSourceTransactions()
            throws Exception
    {
        Observed observed = stream(FlushBoundary.TRANSACTION);
        System.out.println("TransactionBoundaryIT: transaction boundaries: " + observed);
        assertThat(observed.commits()).as("flushes the trigger saw commit").isGreaterThanOrEqualTo(5);
        assertThat(observed.wrongCommits()).as("committed target states whose sum is not the source's").isEmpty();
        assertThat(observed.reads()).as("reads of the target while it streamed").isGreaterThanOrEqualTo(10);
        assertThat(observed.wrongReads()).as("reads that saw part of a source transaction").isZero();
    }

    @Test
    void batchBoundariesCommitPartsOfLargeTransactions()
            throws Exception
    {
        Observed observed = stream(FlushBoundary.BATCH);
        System.out.println("TransactionBoundaryIT: batch boundaries: " + observed);
        // deterministic: flush.max.events cuts each large transaction into flushes, and one that
        // ends between its debits and its credit commits a smaller sum
        assertThat(observed.wrongCommits()).as("committed target states showing part of a source transaction").isNotEmpty();
        // whether the polling reader catches one of them is a matter of timing: reported above, not asserted
    }

    /** Streams the workload with {@code boundary}; returns what the trigger and the reader saw once the target equals the source. */
    private Observed stream(FlushBoundary boundary)
            throws Exception
    {
        Map<String, String> properties = properties(boundary);
        properties.put("http.port", "-1");
        properties.put("flush.max.events", "20");
        properties.put("flush.interval.ms", "50");
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicLong wrongReads = new AtomicLong();
        AtomicReference<Throwable> readerFailure = new AtomicReference<>();
        try (RunningService running = RunningService.start(properties)) {
            awaitInitialLoad(running::assertRunning);
            target.execute(TransferWorkload.AUDIT_COMMITS);
            Thread reader = new Thread(() -> {
                try (Connection connection = target.connect()) {
                    while (!stop.get()) {
                        if (TransferWorkload.total(connection) != TransferWorkload.TOTAL) {
                            wrongReads.incrementAndGet();
                        }
                        reads.incrementAndGet();
                        Thread.sleep(2);
                    }
                }
                catch (Throwable e) {
                    readerFailure.set(e);
                }
            }, "transaction-boundary-reader");
            reader.start();
            try (Connection connection = source.connect()) {
                TransferWorkload workload = new TransferWorkload(connection, 42);
                for (int i = 0; i < 40; i++) {
                    if (i % 8 == 3) {
                        // 1,100 change events: 55 times flush.max.events
                        workload.largeTransaction(10);
                    }
                    else {
                        workload.smallTransaction();
                    }
                }
                awaitTargetEqualsSource(running::assertRunning);
            }
            finally {
                stop.set(true);
                reader.join();
            }
        }
        assertThat(readerFailure.get()).isNull();
        try (Connection connection = target.connect()) {
            return new Observed(TransferWorkload.single(connection, "SELECT count(*) FROM public.committed_totals"), wrongCommits(connection), reads.get(), wrongReads.get());
        }
    }

    /**
     * The documented fallback for a transaction that alone fills {@code buffer.max.bytes}: the
     * service stops with an error saying so, nothing of the transaction in the target; started with
     * a larger buffer it resumes before the transaction and applies it whole.
     */
    @Test
    void transactionLargerThanTheBufferStopsTheServiceAndIsAppliedWholeWithALargerOne()
            throws Exception
    {
        Map<String, String> properties = properties(FlushBoundary.TRANSACTION);
        properties.put("http.port", "-1");
        properties.put("buffer.max.bytes", "8192");
        try (Connection connection = source.connect()) {
            TransferWorkload workload = new TransferWorkload(connection, 3);
            RunningService running = RunningService.start(properties);
            awaitInitialLoad(running::assertRunning);
            target.execute(TransferWorkload.AUDIT_COMMITS);
            workload.smallTransaction();
            awaitTargetEqualsSource(running::assertRunning);
            // 600 change events of 200 rows: the rows alone take more than 8 kB of buffer
            workload.largeTransaction(5);
            Throwable failure = running.awaitFailure(TIMEOUT);
            assertThat(failure).isInstanceOf(io.pgsink.core.error.SinkException.class)
                    .hasMessageContaining("takes more than buffer.max.bytes")
                    .hasMessageContaining("8192 bytes")
                    .hasMessageContaining("raise buffer.max.bytes")
                    .hasMessageContaining("nothing of it was applied");
            assertThat(total()).isEqualTo(TransferWorkload.TOTAL);
            try (Connection sourceConnection = source.connect(); Connection targetConnection = target.connect()) {
                assertThat(TransferWorkload.checksum(targetConnection)).as("the large transaction is not in the target").isNotEqualTo(TransferWorkload.checksum(sourceConnection));
            }

            properties.put("buffer.max.bytes", Long.toString(1 << 20));
            try (RunningService again = RunningService.start(properties)) {
                awaitTargetEqualsSource(again::assertRunning);
            }
        }
        try (Connection connection = target.connect()) {
            assertThat(wrongCommits(connection)).as("committed target states whose sum is not the source's").isEmpty();
        }
    }

    @Test
    void killInsideALargeTransactionLosesAndDuplicatesNothing(@TempDir Path directory)
            throws Exception
    {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Map<String, String> properties = properties(FlushBoundary.TRANSACTION);
        properties.put("http.port", Integer.toString(port));
        properties.put("http.host", "127.0.0.1");
        properties.put("flush.max.events", "100");
        Path config = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        Path log = directory.resolve("pgsink.log");
        HttpClient client = HttpClient.newHttpClient();

        try (Connection connection = source.connect()) {
            TransferWorkload workload = new TransferWorkload(connection, 7);
            Process process = ServiceProcess.start(config, log);
            try {
                Process first = process;
                awaitInitialLoad(() -> assertThat(first.isAlive()).as("pgsink runs; log:\n%s", ServiceProcess.tail(log)).isTrue());
                target.execute(TransferWorkload.AUDIT_COMMITS);
                for (int kill = 1; kill <= 2; kill++) {
                    workload.smallTransaction();
                    Process streaming = process;
                    awaitTargetEqualsSource(() -> assertThat(streaming.isAlive()).as("pgsink runs; log:\n%s", ServiceProcess.tail(log)).isTrue());
                    long before = eventsIn(client, port);
                    long changes = workload.largeTransaction(300);
                    // inside the transaction: the service has taken a fifth of its events, none of them applied
                    long inside = awaitEventsIn(process, log, client, port, before + changes / 5);
                    long totalAtKill = total();
                    process.destroyForcibly();
                    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                    System.out.println("TransactionBoundaryIT: kill " + kill + " after " + (inside - before) + " of the " + changes + " events of a large transaction");
                    assertThat(inside - before).as("the kill came inside the large transaction").isLessThan(changes);
                    assertThat(totalAtKill).isEqualTo(TransferWorkload.TOTAL);
                    assertThat(total()).isEqualTo(TransferWorkload.TOTAL);
                    process = ServiceProcess.start(config, log);
                }
                Process last = process;
                workload.smallTransaction();
                awaitTargetEqualsSource(() -> assertThat(last.isAlive()).as("pgsink runs; log:\n%s", ServiceProcess.tail(log)).isTrue());
            }
            finally {
                process.destroy();
                if (!process.waitFor(60, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }
        try (Connection connection = target.connect()) {
            assertThat(TransferWorkload.single(connection, "SELECT count(*) FROM public.committed_totals")).as("flushes the trigger saw commit").isGreaterThanOrEqualTo(3);
            assertThat(wrongCommits(connection)).as("committed target states whose sum is not the source's").isEmpty();
        }
        assertThat(Files.readString(log)).contains("resuming from the position stored in the target");
    }

    private Map<String, String> properties(FlushBoundary boundary)
    {
        Map<String, String> properties = pipeline.properties("public.accounts_a,public.accounts_b");
        // the default flush interval, unless a test sets one: flushes end by size
        properties.remove("flush.interval.ms");
        properties.put("flush.boundary", boundary.name().toLowerCase(java.util.Locale.ROOT));
        properties.put("progress.interval.ms", "1000");
        return properties;
    }

    /** Waits until the initial load copied the seeded accounts (the trigger is created after it: the load commits chunk by chunk). */
    private void awaitInitialLoad(RunningService.Check running)
    {
        RunningService.await("the initial load", TIMEOUT, () -> {
            running.run();
            try (Connection connection = target.connect()) {
                assertThat(TransferWorkload.single(connection, "SELECT (SELECT count(*) FROM public.accounts_a) + (SELECT count(*) FROM public.accounts_b)"))
                        .isEqualTo(2L * TransferWorkload.ACCOUNTS);
                assertThat(TransferWorkload.total(connection)).isEqualTo(TransferWorkload.TOTAL);
            }
        });
    }

    private void awaitTargetEqualsSource(RunningService.Check running)
    {
        RunningService.await("the target to equal the source", TIMEOUT, () -> {
            running.run();
            try (Connection sourceConnection = source.connect(); Connection targetConnection = target.connect()) {
                assertThat(TransferWorkload.checksum(targetConnection)).isEqualTo(TransferWorkload.checksum(sourceConnection));
            }
        });
    }

    /** Polls the service's event counter (finer than {@link RunningService#await}: the window is a few seconds) until it reaches {@code events}. */
    private static long awaitEventsIn(Process process, Path log, HttpClient client, int port, long events)
            throws Exception
    {
        AtomicLong seen = new AtomicLong();
        ServiceProcess.awaitProgress(process, log, "the service to take " + events + " events", TIMEOUT, Duration.ofMillis(5), () -> {
            seen.set(eventsIn(client, port));
            assertThat(seen.get()).isGreaterThanOrEqualTo(events);
        });
        return seen.get();
    }

    private static long eventsIn(HttpClient client, int port)
            throws Exception
    {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
        Matcher matcher = EVENTS_IN.matcher(response.body());
        return matcher.find() ? (long) Double.parseDouble(matcher.group(1)) : 0;
    }

    private long total()
            throws SQLException
    {
        try (Connection connection = target.connect()) {
            return TransferWorkload.total(connection);
        }
    }

    /** The sums of committed target transactions that differ from the source's constant sum. */
    private static List<Long> wrongCommits(Connection connection)
            throws SQLException
    {
        List<Long> wrong = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT total FROM public.committed_totals WHERE total <> ? ORDER BY tx")) {
            statement.setLong(1, TransferWorkload.TOTAL);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    wrong.add(rows.getLong(1));
                }
            }
        }
        return wrong;
    }

    /** What the commit trigger and the polling reader saw. */
    private record Observed(long commits, List<Long> wrongCommits, long reads, long wrongReads)
    {
        @Override
        public String toString()
        {
            return commits + " flush commits (" + wrongCommits.size() + " with a wrong sum), " + reads + " reads (" + wrongReads + " with a wrong sum)";
        }
    }
}
