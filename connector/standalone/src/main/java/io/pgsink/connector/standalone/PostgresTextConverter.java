package io.pgsink.connector.standalone;

import io.debezium.connector.postgresql.UnchangedToastedReplicationMessageColumn;
import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.postgresql.util.PGobject;

import java.nio.charset.StandardCharsets;
import java.sql.Types;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

/**
 * A Debezium custom converter ({@code converters=pgsinktext}) that sends some column types as their
 * PostgreSQL text, because Debezium's own representation loses them:
 * <ul>
 * <li>{@code bit} and {@code varbit}: Debezium sends bit strings as little-endian bytes without
 *     their length (a varbit's leading zeros are lost) and one-bit strings as booleans;</li>
 * <li>every array: Debezium has no schema for some ({@code money[]}, {@code interval[]},
 *     {@code varbit[]}, {@code xml[]}, {@code point[]}...) and drops those columns from its events,
 *     which would write NULL over them; it turns multi-dimensional arrays into arrays of NULLs and
 *     fails on {@code NaN} in {@code numeric[]}; arrays of domains are unsupported. The array's text
 *     is exact for all of them;</li>
 * <li>geometric and other types without a Debezium converter ({@code box}, {@code path},
 *     {@code pg_lsn}, {@code tsquery}...), which otherwise arrive as bytes.</li>
 * </ul>
 * Values arrive as text while streaming (pgoutput) and as driver objects in snapshots; both become
 * the same text. An unchanged TOASTed value becomes the unavailable-value placeholder, which the
 * record mapper recognizes.
 */
public final class PostgresTextConverter
        implements CustomConverter<SchemaBuilder, RelationalColumn>
{
    public static final String NAME = "pgsinktext";
    public static final String PLACEHOLDER_PROPERTY = "unavailable.value.placeholder";

    static final Set<String> TYPES = Set.of("bit", "varbit", "box", "circle", "line", "lseg", "path", "polygon", "pg_lsn", "tsquery", "txid_snapshot", "pg_snapshot");

    private String placeholder = io.pgsink.connector.debezium.UnavailablePlaceholder.DEFAULT;

    @Override
    public void configure(Properties properties)
    {
        placeholder = properties.getProperty(PLACEHOLDER_PROPERTY, placeholder);
    }

    @Override
    public void converterFor(RelationalColumn column, ConverterRegistration<SchemaBuilder> registration)
    {
        String type = column.typeName() == null ? "" : column.typeName().toLowerCase(Locale.ROOT);
        boolean array = column.jdbcType() == Types.ARRAY || type.startsWith("_") || type.endsWith("[]");
        if (!array && !TYPES.contains(type)) {
            return;
        }
        SchemaBuilder schema = SchemaBuilder.string();
        if (column.isOptional()) {
            schema.optional();
        }
        registration.register(schema, this::text);
    }

    private Object text(Object value)
    {
        if (value == null) {
            return null;
        }
        if (value instanceof String string) {
            return string;
        }
        if (value instanceof PGobject object) {
            return object.getValue();
        }
        if (value instanceof Boolean bit) {
            return bit ? "1" : "0";
        }
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (UnchangedToastedReplicationMessageColumn.isUnchangedToastedValue(value)) {
            return placeholder;
        }
        // java.sql.Array (pgjdbc's PgArray prints the array's text) and anything else with a text form
        return value.toString();
    }
}
