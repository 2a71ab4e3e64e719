package io.pgsink.copy.load;

/**
 * Told how many bytes each COPY sends, for metrics such as the bytes copied in total. Called by
 * {@link CopyLoader#copyIn} on the COPY's thread after every chunk handed to the server (one
 * {@code writeToCopy} call), including the chunks of a COPY that fails later.
 *
 * <p>Called in the load's hot path: an implementation must be cheap (a counter's increment) and
 * must not throw.
 */
@FunctionalInterface
public interface CopyListener
{
    CopyListener NONE = bytes -> {};

    void bytesSent(int bytes);
}
