package io.pgsink.connector.kafka;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
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
 * ({@link SinkRecordMapper}); a change event of {@code debezium-json} straight from its bytes where
 * it can ({@link DebeziumJsonRecords#readDirect}). A record that cannot be read or mapped fails
 * the task, or under {@code errors.tolerance=all} goes to Connect's errant-record reporter when
 * Connect has one for the connector, and is skipped with a warning otherwise.
 *
 * <p>Owned by the task's thread, or by the thread of {@link ReadAhead} while it reads ahead.
 */
final class RecordReader
{
    private static final Logger log = LoggerFactory.getLogger(RecordReader.class);

    private final String name;
    private final SinkRecordMapper mapper;
    private final boolean toleratesRejected;
    private final boolean direct;
    /** Under record.format=debezium-json; null otherwise. */
    @Nullable
    private final DebeziumJsonRecords jsonRecords;
    /** Under errors.tolerance=all with Connect's reporter; null otherwise. */
    @Nullable
    private final ErrantRecords errantRecords;

    RecordReader(KafkaSinkConfig config, SinkRecordMapper mapper, @Nullable ErrantRecords errantRecords)
    {
        this(config, mapper, errantRecords, true);
    }

    /**
     * @param direct whether change events of {@code record.format=debezium-json} are read without
     *        their structs ({@link DebeziumJsonRecords#readDirect}); false only to compare the two
     */
    RecordReader(KafkaSinkConfig config, SinkRecordMapper mapper, @Nullable ErrantRecords errantRecords, boolean direct)
    {
        this.direct = direct;
        this.name = config.sinkName();
        this.mapper = mapper;
        this.toleratesRejected = config.sink().toleratesRejectedRows();
        this.jsonRecords = config.recordFormat() == RecordFormat.DEBEZIUM_JSON ? new DebeziumJsonRecords() : null;
        this.errantRecords = errantRecords;
    }

    /**
     * The record's event; empty for records that change nothing, and for bad records skipped under
     * errors.tolerance=all. On the task's thread: {@link #decode}, then {@link #take}.
     *
     * @param received the record as Connect handed it
     * @throws SinkException a {@link ErrorCode#CONFIG} or transient failure, or any when bad records
     *         are not tolerated
     */
    Optional<ChangeEvent> read(SinkRecord received, SourcePosition position)
    {
        return take(decode(received, position), received);
    }

    /**
     * Reads and maps the record, keeping a failure for {@link #take} rather than throwing it: may
     * run ahead of the task's thread, on the thread of {@link ReadAhead}, as long as no other thread
     * reads at the same time (the reader and its mapper keep caches).
     */
    Decoded decode(SinkRecord received, SourcePosition position)
    {
        try {
            ChangeEvent read = jsonRecords != null && direct ? jsonRecords.readDirect(received, position, mapper)
                    : null;
            if (read != null) {
                return new Decoded(read, null, null, mapper.routedTarget(), mapper.routedSource());
            }
            Optional<ChangeEvent> event = mapper.map(jsonRecords != null ? jsonRecords.read(received) : received,
                    position);
            return new Decoded(event.orElse(null), null, null, mapper.routedTarget(), mapper.routedSource());
        }
        catch (SinkException e) {
            return new Decoded(null, e, null, mapper.routedTarget(), mapper.routedSource());
        }
        catch (DataException | ClassCastException | IllegalArgumentException e) {
            return new Decoded(null, new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot read the record of topic "
                    + received.topic() + " at " + position + ": " + e.getMessage(), e), null, null, null);
        }
        catch (RuntimeException e) {
            return new Decoded(null, null, e, null, null);
        }
    }

    /**
     * On the task's thread: the event {@link #decode} read, or its failure thrown, or, under
     * errors.tolerance=all, reported and skipped.
     *
     * @throws SinkException a {@link ErrorCode#CONFIG} or transient failure, or any when bad records
     *         are not tolerated
     */
    Optional<ChangeEvent> take(Decoded decoded, SinkRecord received)
    {
        if (decoded.target != null && decoded.source != null) {
            mapper.noteSource(decoded.target, decoded.source);
        }
        if (decoded.unexpected != null) {
            throw decoded.unexpected;
        }
        SinkException failure = decoded.failure;
        if (failure == null) {
            return Optional.ofNullable(decoded.event);
        }
        if (failure.isTransient() || failure.errorCode() == ErrorCode.CONFIG || !toleratesRejected) {
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

    /**
     * What {@link #decode} made of a record: its event (null when it changes nothing), or the
     * failure to read it, and the tables the column selection notes when it is taken.
     */
    record Decoded(@Nullable ChangeEvent event, @Nullable SinkException failure, @Nullable RuntimeException unexpected,
            @Nullable TableId target, @Nullable TableId source) {}
}
