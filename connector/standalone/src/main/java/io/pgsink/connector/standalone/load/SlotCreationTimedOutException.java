package io.pgsink.connector.standalone.load;

import java.sql.SQLException;

/**
 * Creating the replication slot of the initial load did not finish within
 * {@code slot.creation.timeout.ms}: PostgreSQL creates a logical slot once every transaction that
 * held a transaction id when it started has ended, so open transactions on the source hold it up.
 */
public final class SlotCreationTimedOutException
        extends SQLException
{
    SlotCreationTimedOutException(String slotName, long timeoutMillis, Throwable cause)
    {
        super("Creating replication slot " + slotName + " did not finish within " + timeoutMillis + " ms", "57014",
                cause);
    }
}
