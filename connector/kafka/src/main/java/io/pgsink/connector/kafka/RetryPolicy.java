package io.pgsink.connector.kafka;

import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkTaskContext;

import static java.util.Objects.requireNonNull;

/**
 * What a failure of the task means to Connect, by the taxonomy of {@code SqlFailures}: a
 * {@linkplain SinkException#isTransient() transient} one becomes a {@link RetriableException}
 * after {@code context.timeout} is set to the next backoff (500 ms, doubling, up to
 * {@code retry.backoff.max.ms}), so that Connect hands the same records again after it; any other
 * a {@link ConnectException}, which fails the task with the message (table, key, column, position,
 * reason; never a value: the cause chain is sanitized). Owned by the task's thread.
 */
final class RetryPolicy
{
    private final String name;
    private final Backoff backoff;
    private final SinkTaskContext context;
    private int failedAttempts;

    RetryPolicy(String name, Backoff backoff, SinkTaskContext context)
    {
        this.name = requireNonNull(name, "name is null");
        this.backoff = requireNonNull(backoff, "backoff is null");
        this.context = requireNonNull(context, "context is null");
    }

    /** The exception to throw to Connect for {@code failure}. */
    RuntimeException failure(SinkException failure)
    {
        if (failure.isTransient()) {
            return retry(failure);
        }
        return new ConnectException(name + " - " + failure.getMessage(), failure);
    }

    /** A {@link RetriableException} after the next backoff, whatever the failure's class. */
    RetriableException retry(SinkException failure)
    {
        long delay = backoff.delayMillis(failedAttempts);
        failedAttempts++;
        context.timeout(delay);
        return new RetriableException(name + " - " + failure.getMessage() + " (attempt " + failedAttempts
                + ", retrying in " + delay + " ms)", failure);
    }

    /** A call succeeded: the next failure waits the first backoff again. */
    void succeeded()
    {
        failedAttempts = 0;
    }
}
