package io.pgsink.copy.load;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * PostgreSQL rejected a row of a COPY, and this is the row. It is the server's
 * {@link PSQLException}, with the same {@link ServerErrorMessage} and SQLState (the original is the
 * cause), plus {@link #row()}: the line number in the server's context ({@code COPY t, line 7})
 * is not the row number when values hold line feeds.
 *
 * <p>{@link #getMessage()} is pgjdbc's text, which can hold row values; use
 * {@link CopyLoader#describeCopyFailure} for anything a user or a log sees.
 */
public class CopyRejectedException
        extends PSQLException
{
    private final long row;

    public CopyRejectedException(PSQLException rejection, long row)
    {
        super(rejection.getServerErrorMessage());
        initCause(rejection);
        this.row = row;
    }

    /** The 1-based number of the rejected row, in the order the rows were written. */
    public long row()
    {
        return row;
    }
}
