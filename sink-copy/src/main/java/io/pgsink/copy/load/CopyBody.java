package io.pgsink.copy.load;

import io.pgsink.copy.write.CsvWriter;

import java.sql.SQLException;

/**
 * Writes the rows of one COPY. Called once by {@link CopyLoader#copyIn}, on the caller's thread;
 * the writer must not escape the call. Any exception it throws cancels the COPY.
 */
@FunctionalInterface
public interface CopyBody
{
    void write(CsvWriter writer)
            throws SQLException;
}
