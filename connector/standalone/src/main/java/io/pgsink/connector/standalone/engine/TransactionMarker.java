package io.pgsink.connector.standalone.engine;

import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One of the records Debezium sends at the start and end of each source transaction when
 * {@code provide.transaction.metadata=true}: a BEGIN before the transaction's first change, an END
 * after its last (the PostgreSQL connector emits it on the transaction's COMMIT message, with the
 * commit's LSN as both {@code lsn_proc} and {@code lsn_commit} of its offset, so that offset is a
 * position between two transactions to resume from). Snapshot rows are not inside transactions.
 *
 * @param id Debezium's transaction id, {@code txId:commitLsn} for PostgreSQL
 */
record TransactionMarker(Status status, String id)
{
    /** The schema Debezium gives the value of BEGIN and END records. */
    static final String VALUE_SCHEMA = "io.debezium.connector.common.TransactionMetadataValue";

    enum Status
    {
        BEGIN,
        END,
    }

    TransactionMarker
    {
        requireNonNull(status, "status is null");
        requireNonNull(id, "id is null");
    }

    /** The marker {@code record} is, or empty for a change event, heartbeat or anything else. */
    static Optional<TransactionMarker> of(SourceRecord record)
    {
        if (!(record.value() instanceof Struct value) || !VALUE_SCHEMA.equals(value.schema().name())) {
            return Optional.empty();
        }
        String status = value.getString("status");
        String id = String.valueOf(value.get("id"));
        for (Status each : Status.values()) {
            if (each.name().equals(status)) {
                return Optional.of(new TransactionMarker(each, id));
            }
        }
        return Optional.empty();
    }
}
