package io.pgsink.copy.load;

import io.pgsink.copy.write.BinaryCopyWriter;

import java.sql.SQLException;

/** Writes the rows of one binary COPY, as {@link CopyBody} does for CSV. */
@FunctionalInterface
public interface BinaryCopyBody
{
    void write(BinaryCopyWriter writer)
            throws SQLException;
}
