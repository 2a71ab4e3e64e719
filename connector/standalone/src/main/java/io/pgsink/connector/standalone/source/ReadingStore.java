package io.pgsink.connector.standalone.source;

import java.util.Optional;

/**
 * Where {@link SourceTableWatch} keeps the last reading of the captured source tables it accepted,
 * so that the next start compares the catalog with it (see {@link TargetReadingStore}). A reading is
 * accepted only while no change that stops the sink is pending, so the stored one never holds a
 * change the target has not been brought up to: it may be older than the stream, never newer.
 *
 * <p>Used by the watch under its own lock; implementations need not be thread-safe.
 */
public interface ReadingStore
        extends TableChanges.StoredReading, AutoCloseable
{
    /**
     * The stored reading, empty when none was stored.
     *
     * @throws io.pgsink.core.error.SinkException when the target cannot be read
     *         ({@link io.pgsink.core.error.ErrorCode#TRANSIENT} where retrying may help)
     */
    Optional<SourceTables> load();

    /**
     * Replaces the stored reading with {@code captured}, committed when this returns.
     *
     * @throws io.pgsink.core.error.SinkException when the target cannot be written
     *         ({@link io.pgsink.core.error.ErrorCode#TRANSIENT} where retrying may help)
     */
    void store(SourceTables captured);

    @Override
    void close();
}
