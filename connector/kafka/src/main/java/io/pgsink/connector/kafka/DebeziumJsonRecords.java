package io.pgsink.connector.kafka;

import io.pgsink.connector.kafka.json.EnvelopeImages;
import io.pgsink.connector.kafka.json.JsonEnvelopeReader;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.StandardCharsets;

/**
 * Under {@code record.format=debezium-json}: turns a record whose key and value are the bytes (or
 * text) of {@code JsonConverter}'s {@code {"schema":…,"payload":…}} into the record
 * {@code JsonConverter} would have handed the task, the same schemas and values, read by
 * {@link JsonEnvelopeReader}; the rest of the task maps it as any other. The common record, a
 * change event of a table's last schema, skips the structs: {@link #readDirect}. A record without a value
 * (a tombstone) keeps its null value and no value schema, as {@code JsonConverter} gives it.
 *
 * <p>Not thread-safe: one per task.
 */
final class DebeziumJsonRecords
{
    private final JsonEnvelopeReader keys = new JsonEnvelopeReader();
    private final JsonEnvelopeReader values = new JsonEnvelopeReader();

    /**
     * @throws SinkException {@link ErrorCode#CONFIG} when the worker's converter did not hand over
     *         bytes or text; {@link ErrorCode#SCHEMA_MISMATCH} when they are not such JSON, naming
     *         topic, partition, offset and the reason, never a value
     */
    SinkRecord read(SinkRecord record)
    {
        SchemaAndValue key = read(keys, record, record.key(), "key");
        SchemaAndValue value = read(values, record, record.value(), "value");
        return record.newRecord(record.topic(), record.kafkaPartition(), key.schema(), key.value(), value.schema(),
                value.value(), record.timestamp(), record.headers());
    }

    /**
     * The event of a Debezium change event (op {@code c}, {@code r}, {@code u} or {@code d}) read
     * straight from the record's bytes into pgsink's change event, without the value's structs
     * ({@link EnvelopeImages}, the mapping's {@link SinkRecordMapper#mapImages}); null for any
     * other record, and for one not of the last value schema read: {@link #read} and the mapping of
     * the struct then take it as before (and name what is wrong with it).
     *
     * @throws SinkException as {@link #read} of the key; as the mapping, of the images' values
     */
    @Nullable
    ChangeEvent readDirect(SinkRecord record, SourcePosition position, SinkRecordMapper mapper)
    {
        if (!(record.value() instanceof byte[] json)) {
            return null;
        }
        EnvelopeImages images = values.readImages(json);
        if (images == null) {
            return null;
        }
        SchemaAndValue key = read(keys, record, record.key(), "key");
        return mapper.mapImages(record, values.lastSchema(), key, images, position);
    }

    private static SchemaAndValue read(JsonEnvelopeReader reader, SinkRecord record, @Nullable Object data, String part)
    {
        byte[] json;
        if (data == null) {
            return SchemaAndValue.NULL;
        }
        if (data instanceof byte[] bytes) {
            json = bytes;
        }
        else if (data instanceof String text) {
            json = text.getBytes(StandardCharsets.UTF_8);
        }
        else {
            throw new SinkException(ErrorCode.CONFIG, "The " + part + " of the record of topic " + record.topic()
                    + " partition " + record.kafkaPartition() + " at offset "
                    + record.kafkaOffset() + " is a " + data.getClass().getName() + ", not bytes: "
                    + KafkaSinkConfig.RECORD_FORMAT + "=debezium-json needs "
                    + part + ".converter=org.apache.kafka.connect.converters.ByteArrayConverter (or StringConverter); "
                    + "the worker's converter is used where the connector sets none");
        }
        try {
            return reader.read(json);
        }
        catch (DataException e) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot read the " + part + " of the record of topic "
                    + record.topic() + " partition " + record.kafkaPartition()
                    + " at offset " + record.kafkaOffset() + " as Debezium JSON with schema ("
                    + KafkaSinkConfig.RECORD_FORMAT + "=debezium-json): " + e.getMessage(), e);
        }
    }
}
