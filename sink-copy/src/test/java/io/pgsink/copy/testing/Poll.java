package io.pgsink.copy.testing;

import org.awaitility.Awaitility;

import java.sql.SQLException;
import java.time.Duration;

/**
 * The tests' one way to wait for observed progress: checks at once, then every 100 ms, until the check
 * passes or {@code timeout} ends, then fails naming {@code what} and the check's last failure. An
 * {@link AssertionError} or {@link SQLException} means "not yet" (a table still to be created fails
 * the query); anything else fails at once.
 */
public final class Poll
{
    private Poll() {}

    public static void until(String what, Duration timeout, Check check)
    {
        // a first check at once and a short interval: a test waits for hundreds of moments, and Awaitility's
        // default first delay (one interval) and 200 ms polls added ~0.3 s to each (#32). The checks are
        // a query or two, so 100 ms keeps the polling well under the work it waits for.
        until(what, timeout, Duration.ofMillis(100), check);
    }

    /** As {@link #until(String, Duration, Check)}, polling every {@code interval}: for moments that pass in milliseconds. */
    public static void until(String what, Duration timeout, Duration interval, Check check)
    {
        Awaitility.await(what).atMost(timeout).pollDelay(Duration.ZERO).pollInterval(interval)
                .ignoreExceptionsInstanceOf(SQLException.class).untilAsserted(check::run);
    }

    @FunctionalInterface
    public interface Check
    {
        void run()
                throws Exception;
    }
}
