package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.source.SlotCreationWatch;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.SQLException;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What a failure that ends the service says to users, once {@link EngineFailures} found that
 * retrying cannot fix it: the sink's own words, the server's (with what to do for a refused login),
 * or the transactions that kept the replication slot from being created; and the slot a failed
 * first run leaves behind, dropped.
 */
final class ServiceFailures
{
    // the service's category, which users' log settings name
    private static final Logger log = LoggerFactory.getLogger(StandaloneService.class);
    /** How long a failed run waits for its connections to let go of the slot it created before dropping it. */
    private static final long SLOT_RELEASE_TIMEOUT_MILLIS = 10_000;

    private final StandaloneConfig config;
    private final String name;

    ServiceFailures(StandaloneConfig config)
    {
        this.config = requireNonNull(config, "config is null");
        this.name = config.sink().sinkName();
    }

    /** What {@code error}, which retrying cannot fix, says to users. */
    SinkException failure(Throwable error)
    {
        // the engine wraps what the consumer threw: the sink's own failure says it best
        Optional<SinkException> sinkFailure = EngineFailures.sinkFailure(error);
        if (sinkFailure.isPresent()) {
            return sinkFailure.get();
        }
        String context = name + " - streaming from " + config.sourceDescription() + " failed";
        Optional<SQLException> sql = EngineFailures.sqlFailure(error);
        if (sql.isPresent()) {
            // the server's words and SQLState, not the driver's exception text; for a refused login,
            // privilege or database (SQLState 42501, class 28, 3D000), what to do
            return SqlFailures.translate(sql.get(), ErrorCode.CONFIG, context, SqlFailures.remedy(sql.get(),
                    "source.database.user or " + SinkConfig.TARGET_USER,
                    "source.database.password or " + SinkConfig.TARGET_PASSWORD, "source.database.dbname or "
                            + SinkConfig.TARGET_URL).map(remedy -> ". What to do: " + remedy).orElse(""));
        }
        return new SinkException(ErrorCode.CONFIG, context + ": " + error, error);
    }

    /**
     * {@code failure}, after dropping the replication slot when {@code slotToDrop}: this service
     * created it and the failure came before streaming began: a slot nobody reads keeps the source's WAL from being
     * removed, and the next run creates it again (and loads the tables again).
     */
    SinkException withSlotCleanup(SinkException failure, boolean slotToDrop)
    {
        if (!slotToDrop) {
            return failure;
        }
        SourceDatabase source = new SourceDatabase(config.debezium());
        try {
            if (source.dropSlotWhenIdle(SLOT_RELEASE_TIMEOUT_MILLIS)) {
                return new SinkException(failure.errorCode(), failure.getMessage() + " (replication slot "
                        + source.slotName() + ", which this run created before"
                        + " streaming began, was dropped)", failure);
            }
        }
        catch (SQLException e) {
            failure.addSuppressed(SqlFailures.sanitized(e));
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (log.isWarnEnabled()) {
            log.warn("{} - replication slot {} was created by this run, which failed before streaming, and could not "
                    + "be dropped: drop it (pgsink reset) unless pgsink runs"
                    + " again soon, since it keeps the source's WAL", name, source.slotName());
        }
        return failure;
    }

    SinkException slotCreationTimedOut(SlotCreationWatch slotWatch)
    {
        return new SinkException(ErrorCode.CONFIG,
                "Creating replication slot " + config.debezium().getOrDefault("slot.name",
                name) + " on " + config.sourceDescription()
                + " did not finish within " + config.slotCreationTimeoutMillis() + " ms ("
                        + StandaloneConfig.SLOT_CREATION_TIMEOUT_MS
                        + "): PostgreSQL waits for open transactions to end: "
                + slotWatch.blockers() + ". End them (COMMIT, ROLLBACK or SELECT pg_terminate_backend(pid)) or raise "
                        + StandaloneConfig.SLOT_CREATION_TIMEOUT_MS + ", then start pgsink again");
    }
}
