package io.pgsink.core.error;

import static java.util.Objects.requireNonNull;

/**
 * The one exception type pgsink throws for failures a user has to understand. The message names
 * what failed and where (table, key, column, offset) and the reason; the {@link ErrorCode} says
 * whether retrying can help. Row values other than keys never appear in the message.
 */
public class SinkException
        extends RuntimeException
{
    private final ErrorCode errorCode;

    public SinkException(ErrorCode errorCode, String message)
    {
        super(requireNonNull(message, "message is null"));
        this.errorCode = requireNonNull(errorCode, "errorCode is null");
    }

    public SinkException(ErrorCode errorCode, String message, Throwable cause)
    {
        super(requireNonNull(message, "message is null"), cause);
        this.errorCode = requireNonNull(errorCode, "errorCode is null");
    }

    public ErrorCode errorCode()
    {
        return errorCode;
    }

    public boolean isTransient()
    {
        return errorCode == ErrorCode.TRANSIENT;
    }
}
