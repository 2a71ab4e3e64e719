package io.pgsink.connector.standalone.source;

import io.pgsink.copy.sql.SqlFailures;
import org.intellij.lang.annotations.Language;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static java.util.Objects.requireNonNull;

/**
 * While Debezium creates the replication slot, says what it waits for. PostgreSQL creates a
 * logical slot only once every transaction that holds a transaction id when it starts has ended,
 * so one open transaction anywhere on the source server (an idle session in a transaction, a long
 * batch job) holds it up, and Debezium says nothing until it gives up. Every {@code interval} this
 * watch logs the transactions the slot waits for (pid, xid, age, user, application, state) until
 * the slot exists; {@link #blockers()} says who blocked it last, for the message when the wait
 * ends in a timeout ({@code slot.creation.timeout.ms}).
 *
 * <p>Runs on its own daemon thread; {@link #close()} stops it.
 */
public final class SlotCreationWatch
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(SlotCreationWatch.class);

    @Language("SQL")
    private static final String BLOCKERS = """
            SELECT pid, backend_xid::text, extract(epoch FROM now() - xact_start)::bigint, usename, application_name,
                state
            FROM pg_catalog.pg_stat_activity
            WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            ORDER BY xact_start""";

    private final String name;
    private final SourceDatabase source;
    private final ScheduledExecutorService executor;
    private final long startNanos = System.nanoTime();
    private volatile String blockers = "";

    private SlotCreationWatch(String name, SourceDatabase source)
    {
        this.name = requireNonNull(name, "name is null");
        this.source = requireNonNull(source, "source is null");
        this.executor = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgsink-slot-watch");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Starts watching, every {@code intervalMillis}, until the slot exists or {@link #close()}. */
    public static SlotCreationWatch start(String name, SourceDatabase source, long intervalMillis)
    {
        SlotCreationWatch watch = new SlotCreationWatch(name, source);
        watch.executor.scheduleWithFixedDelay(watch::check, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
        return watch;
    }

    /** The transactions the slot waited for at the last look, described; empty when none (or the slot exists). */
    public String blockers()
    {
        return blockers;
    }

    private void check()
    {
        try (Connection connection = source.connect()) {
            if (source.slotExists(connection, true)) {
                blockers = "";
                executor.shutdown();
                return;
            }
            List<String> found = new ArrayList<>();
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(BLOCKERS))
                    {
                while (rows.next()) {
                    found.add("pid " + rows.getInt(1) + " (xid " + rows.getString(2) + ", open " + rows.getLong(3)
                            + " s, user " + rows.getString(4)
                            + ", application '" + rows.getString(5) + "', " + rows.getString(6) + ")");
                }
            }
            blockers = String.join(", ", found);
            long waited = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
            if (found.isEmpty()) {
                log.info("{} - replication slot {} not created yet after {} s; no open transaction on the source "
                        + "holds it up", name, source.slotName(), waited);
            }
            else {
                log.warn("{} - creating replication slot {} waits for open transactions on the source to end ({} s so "
                        + "far): {}."
                        + " End them (COMMIT, ROLLBACK or SELECT pg_terminate_backend(pid)) for streaming to start",
                                name, source.slotName(), waited, blockers);
            }
        }
        catch (SQLException e) {
            log.debug("{} - cannot look at the source for what slot creation waits for: {}", name,
                    SqlFailures.describe(e));
        }
    }

    @Override
    public void close()
    {
        executor.shutdownNow();
    }
}
