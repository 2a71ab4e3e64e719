package io.pgsink.copy.testing;

import org.awaitility.Awaitility;

import java.sql.SQLException;
import java.time.Duration;

/**
 * The tests' one way to wait for observed progress: polls a check every 200 ms until it passes or
 * {@code timeout} ends, then fails naming {@code what} and the check's last failure. An
 * {@link AssertionError} or {@link SQLException} means "not yet" (a table still to be created fails
 * the query); anything else fails at once.
 */
public final class Poll
{
    private Poll() {}

    public static void until(String what, Duration timeout, Check check)
    {
        until(what, timeout, Duration.ofMillis(200), check);
    }

    /** As {@link #until(String, Duration, Check)}, polling every {@code interval}: for moments that pass in milliseconds. */
    public static void until(String what, Duration timeout, Duration interval, Check check)
    {
        Awaitility.await(what).atMost(timeout).pollInterval(interval).ignoreExceptionsInstanceOf(SQLException.class).untilAsserted(check::run);
    }

    @FunctionalInterface
    public interface Check
    {
        void run()
                throws Exception;
    }
}
