package io.pgsink.connector.kafka;

/**
 * How the task reads record keys and values ({@code record.format}).
 */
public enum RecordFormat
{
    /** As the worker's converters deliver them: Connect structs with schemas (JsonConverter with schemas, Avro...). */
    CONNECT,
    /**
     * Bytes (or text) of Debezium change events that {@code JsonConverter} wrote with
     * {@code schemas.enable=true}, which the worker's {@code ByteArrayConverter} (or
     * {@code StringConverter}) hands over as they are; pgsink reads them itself
     * ({@link DebeziumJsonRecords}), faster than {@code JsonConverter} would.
     */
    DEBEZIUM_JSON
}
