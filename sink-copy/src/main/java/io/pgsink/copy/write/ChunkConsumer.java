package io.pgsink.copy.write;

import java.sql.SQLException;

/**
 * Receives the bytes a {@link CsvWriter} has encoded, one chunk of whole rows at a time. In
 * production this is {@code CopyIn.writeToCopy}, which sends each call as one CopyData message.
 *
 * <p>The buffer belongs to the writer and is overwritten as soon as this method returns: a
 * consumer that keeps the bytes must copy them.
 */
@FunctionalInterface
public interface ChunkConsumer
{
    void accept(byte[] buffer, int offset, int length)
            throws SQLException;
}
