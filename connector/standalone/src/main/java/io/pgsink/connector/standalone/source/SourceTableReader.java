package io.pgsink.connector.standalone.source;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.error.ErrorCode;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * Reads the source's tables ({@link SourceTables}) on a source connection of its own, opened when
 * first needed and again after a failure.
 *
 * <p>Not thread-safe: {@link SourceTableWatch} calls it under its lock.
 */
public final class SourceTableReader
        implements Supplier<SourceTables>, AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(SourceTableReader.class);

    private final String sinkName;
    private final SourceDatabase source;
    @Nullable
    private Connection connection;

    public SourceTableReader(String sinkName, SourceDatabase source)
    {
        this.sinkName = requireNonNull(sinkName, "sinkName is null");
        this.source = requireNonNull(source, "source is null");
    }

    /**
     * @throws io.pgsink.core.error.SinkException ({@link ErrorCode#TRANSIENT}) when the catalog cannot be read
     */
    @Override
    public SourceTables get()
    {
        try {
            if (connection == null || connection.isClosed()) {
                connection = source.connect("pgsink table watch", false);
            }
            return SourceTables.read(connection);
        }
        catch (SQLException e) {
            close();
            throw SqlFailures.translate(e, ErrorCode.TRANSIENT, "Cannot read the source's tables from its catalog");
        }
    }

    @Override
    public void close()
    {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (SQLException e) {
                log.debug("{} - closing the table watch's source connection failed: {}", sinkName, e.toString());
            }
            connection = null;
        }
    }
}
