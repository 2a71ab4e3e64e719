package io.pgsink.connector.standalone.monitoring;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.core.error.SinkException;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * What the service is doing, for {@code /health} and the {@code pgsink_state{state}} gauge:
 * <ul>
 * <li>{@link State#STARTING}, {@link State#LOADING} (the initial load copies the captured tables),
 *     {@link State#SNAPSHOT} (the last batch applied was snapshot rows),
 *     {@link State#STREAMING}: healthy, HTTP 200;</li>
 * <li>{@link State#RETRYING}: a transient failure (target or source unreachable, restarted) is
 *     being retried with backoff; the body names the error's class, the message (without row
 *     values), the attempt and since when the service has been retrying; HTTP 503;</li>
 * <li>{@link State#FAILED}: stopped by a failure retrying cannot fix; HTTP 503;</li>
 * <li>{@link State#STOPPING}, {@link State#STOPPED}: HTTP 503.</li>
 * </ul>
 * Written by the service's and the engine's threads, read by the HTTP thread: each change replaces
 * one immutable {@link Status}.
 */
public final class ServiceState
{
    private static final ObjectMapper JSON = new ObjectMapper();

    public enum State
    {
        STARTING,
        LOADING,
        SNAPSHOT,
        STREAMING,
        RETRYING,
        STOPPING,
        STOPPED,
        FAILED;

        boolean healthy()
        {
            return this == STARTING || this == LOADING || this == SNAPSHOT || this == STREAMING;
        }
    }

    /**
     * One state and, while retrying or failed, the failure.
     *
     * @param errorClass the {@link io.pgsink.core.error.ErrorCode} of a {@link SinkException}, else the
     *        exception's class
     * @param attempt the failed attempts in a row, 0 when none
     * @param since when the state was entered (for {@link State#RETRYING}: the first failure in a row)
     */
    record Status(State state, String errorClass, String error, int attempt, Instant since) {}

    private final String sinkName;
    private final Supplier<Instant> clock;
    private volatile Status status;

    public ServiceState(String sinkName, Supplier<Instant> clock)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.status = new Status(State.STARTING, "", "", 0, clock.get());
    }

    Status status()
    {
        return status;
    }

    public State state()
    {
        return status.state();
    }

    /** Enters a state without a failure ({@link State#STREAMING}, {@link State#SNAPSHOT}...). */
    public void set(State state)
    {
        requireNonNull(state, "state is null");
        if (state == State.RETRYING || state == State.FAILED) {
            throw new IllegalArgumentException(state + " comes with its failure");
        }
        Status current = status;
        if (current.state() == State.STOPPED || current.state() == State.STOPPING && state != State.STOPPED) {
            // stopping is final: a batch that ends while the service stops does not make it streaming again
            return;
        }
        if (current.state() != state || current.attempt() != 0) {
            status = new Status(state, "", "", 0, clock.get());
        }
    }

    /** Attempt {@code attempt} (from 1) failed with {@code failure}, which is retried. */
    public void retrying(Throwable failure, int attempt)
    {
        Status current = status;
        Instant since = current.state() == State.RETRYING ? current.since() : clock.get();
        status = new Status(State.RETRYING, errorClass(failure), String.valueOf(failure.getMessage()), attempt, since);
    }

    /** Stopped by {@code failure}. */
    public void failed(Throwable failure)
    {
        status = new Status(State.FAILED, errorClass(failure), String.valueOf(failure.getMessage()), status.attempt(),
                clock.get());
    }

    private static String errorClass(Throwable failure)
    {
        return failure instanceof SinkException sinkException ? sinkException.errorCode().name()
                : failure.getClass().getSimpleName();
    }

    /** The {@code /health} answer: 200 while {@linkplain State#healthy() healthy}, else 503. */
    public HttpEndpoint.Health health()
    {
        Status current = status;
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", current.state().healthy() ? "UP" : "DOWN");
        body.put("state", current.state().name());
        body.put("sink", sinkName);
        body.put("since", current.since().toString());
        if (!current.errorClass().isEmpty()) {
            body.put("error_class", current.errorClass());
            body.put("error", current.error());
            body.put("attempt", current.attempt());
        }
        try {
            return new HttpEndpoint.Health(current.state().healthy(), JSON.writeValueAsString(body));
        }
        catch (JsonProcessingException e) {
            // strings and numbers always serialize
            throw new IllegalStateException(e);
        }
    }
}
