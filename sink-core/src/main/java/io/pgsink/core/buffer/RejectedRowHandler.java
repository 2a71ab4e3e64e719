package io.pgsink.core.buffer;

import java.util.List;

/**
 * Receives the changes skipped under {@code errors.tolerance=all}. The standalone service writes
 * them to a dead-letter table in the same transaction as the rest of the batch; the Kafka Connect
 * task hands the records behind them to Connect's errant-record reporter.
 *
 * <p>Called on the thread that applies the batch, before the batch commits. Throwing stops the
 * batch: nothing of it is committed.
 */
@FunctionalInterface
public interface RejectedRowHandler
{
    void rejected(List<RejectedRow> rows);
}
