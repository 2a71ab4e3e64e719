package io.pgsink.connector.debezium;

/**
 * Turns one non-null Kafka Connect field value, as Debezium writes it, into the Java value pgsink's
 * encoders take (see {@code io.pgsink.copy.encode.text.ValueEncoders}). Resolved once per column and schema
 * version by {@link ValueConverters#forSchema}; the per-record loop only indexes an array of them.
 * Implementations are stateless and thread-safe.
 */
@FunctionalInterface
interface ValueConverter
{
    /**
     * @param value a non-null value of the column's Connect schema
     * @throws IllegalArgumentException when the value cannot be represented; the mapper names table,
     *         key and column
     */
    Object convert(Object value);
}
