package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.copy.testing.Poll;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** A {@link StandaloneService} running on its own thread, as {@code pgsink run} would run it. */
public final class RunningService
        implements AutoCloseable
{
    private final StandaloneService service;
    private final Thread thread;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    private RunningService(StandaloneService service)
    {
        this.service = service;
        this.thread = new Thread(() -> {
            try {
                service.run();
            }
            catch (Throwable e) {
                failure.set(e);
            }
        }, "pgsink-test-service");
    }

    public static RunningService start(Map<String, String> properties)
    {
        RunningService running = new RunningService(new StandaloneService(StandaloneConfig.parse(properties)));
        running.thread.start();
        return running;
    }

    public StandaloneService service()
    {
        return service;
    }

    /** Waits for {@code run()} to end by itself and returns what it threw. */
    public Throwable awaitFailure(Duration timeout)
            throws InterruptedException
    {
        thread.join(timeout.toMillis());
        if (thread.isAlive()) {
            throw new AssertionError("the service still runs after " + timeout);
        }
        if (failure.get() == null) {
            throw new AssertionError("the service stopped without an error");
        }
        return failure.get();
    }

    /**
     * Fails the test when the service stopped with an error before it was closed. Throws an
     * {@link IllegalStateException}, so that {@link #await} gives up at once instead of waiting.
     */
    public void assertRunning()
    {
        if (failure.get() != null) {
            throw new IllegalStateException("the service failed", failure.get());
        }
        if (!thread.isAlive()) {
            throw new IllegalStateException("the service stopped");
        }
    }

    @Override
    public void close()
    {
        service.close();
        try {
            thread.join(TimeUnit.SECONDS.toMillis(60));
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while stopping the service", e);
        }
        if (thread.isAlive()) {
            throw new AssertionError("the service did not stop within 60 s; its threads:\n" + threadDump());
        }
        if (failure.get() != null) {
            throw new AssertionError("the service failed", failure.get());
        }
    }

    /** Every live thread's name, state and stack: where a stop that did not end waits. */
    private static String threadDump()
    {
        StringBuilder dump = new StringBuilder();
        for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
            dump.append('"').append(entry.getKey().getName()).append("\" ").append(entry.getKey().getState())
                    .append('\n');
            for (StackTraceElement frame : entry.getValue()) {
                dump.append("    at ").append(frame).append('\n');
            }
        }
        return dump.toString();
    }

    /** Polls {@code check} until it passes ({@link Poll#until}). */
    public static void await(String what, Duration timeout, Poll.Check check)
    {
        Poll.until(what, timeout, check);
    }

    /** A check of the running service, such as {@link #assertRunning()}. */
    @FunctionalInterface
    public interface Check
            extends Poll.Check
    {
    }
}
