package io.pgsink.connector.kafka;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Optional;

/**
 * Reads a record as Connect hands it to the task into pgsink's change event: the bytes of
 * {@code record.format=debezium-json} ({@link DebeziumJsonRecords}), then the mapping
 * ({@link SinkRecordMapper}). A record that cannot be read or mapped fails the task, or under
 * {@code errors.tolerance=all} goes to Connect's errant-record reporter when Connect has one for
 * the connector, and is skipped with a warning otherwise.
 *
 * <p>Owned by the task's thread.
 */
final class RecordReader
{
    private static final Logger log = LoggerFactory.getLogger(RecordReader.class);

    private final String name;
    private final SinkRecordMapper mapper;
    private final boolean toleratesRejected;
    /** Under record.format=debezium-json; null otherwise. */
    @Nullable
    private final DebeziumJsonRecords jsonRecords;
    /** Under errors.tolerance=all with Connect's reporter; null otherwise. */
    @Nullable
    private final ErrantRecords errantRecords;

    RecordReader(KafkaSinkConfig config, SinkRecordMapper mapper, @Nullable ErrantRecords errantRecords)
    {
        this.name = config.sinkName();
        this.mapper = mapper;
        this.toleratesRejected = config.sink().toleratesRejectedRows();
        this.jsonRecords = config.recordFormat() == RecordFormat.DEBEZIUM_JSON ? new DebeziumJsonRecords() : null;
        this.errantRecords = errantRecords;
    }

    /**
     * The record's event; empty for records that change nothing, and for bad records skipped under
     * errors.tolerance=all.
     *
     * @param received the record as Connect handed it
     * @throws SinkException a {@link ErrorCode#CONFIG} or transient failure, or any when bad records
     *         are not tolerated
     */
    Optional<ChangeEvent> read(SinkRecord received, SourcePosition position)
    {
        SinkException failure;
        try {
            return mapper.map(jsonRecords != null ? jsonRecords.read(received) : received, position);
        }
        catch (SinkException e) {
            if (e.isTransient() || e.errorCode() == ErrorCode.CONFIG) {
                throw e;
            }
            failure = e;
        }
        catch (DataException | ClassCastException | IllegalArgumentException e) {
            failure = new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot read the record of topic "
                    + received.topic() + " at " + position + ": " + e.getMessage(), e);
        }
        if (!toleratesRejected) {
            throw failure;
        }
        if (errantRecords != null) {
            errantRecords.report(List.of(received), List.of(failure));
        }
        else {
            log.warn("{} - skipped a record it cannot apply (errors.tolerance=all, and Connect has no errant-record "
                    + "reporter for this connector): {}", name, failure.getMessage());
        }
        return Optional.empty();
    }
}
