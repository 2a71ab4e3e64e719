package io.pgsink.connector.standalone.service;

import java.util.ArrayDeque;
import java.util.Deque;

import static java.util.Objects.requireNonNull;

/**
 * What one engine run opened, closed last-opened first when the run ends, however it ends.
 * A failure to close does not stop the others from closing: the first failure is thrown with
 * the later ones added as suppressed.
 *
 * <p>Not thread-safe: the service's run thread owns it for one engine run.
 */
final class Closer
        implements AutoCloseable
{
    private final Deque<AutoCloseable> opened = new ArrayDeque<>();

    /** Closes {@code resource} with this scope; returns it. */
    <T extends AutoCloseable> T register(T resource)
    {
        opened.push(requireNonNull(resource, "resource is null"));
        return resource;
    }

    @Override
    public void close()
    {
        Throwable first = null;
        while (!opened.isEmpty()) {
            try {
                opened.pop().close();
            }
            catch (Throwable e) {
                if (first == null) {
                    first = e;
                }
                else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first instanceof RuntimeException runtime) {
            throw runtime;
        }
        if (first instanceof Error error) {
            throw error;
        }
        if (first != null) {
            throw new IllegalStateException("Cannot close what an engine run opened: " + first, first);
        }
    }
}
