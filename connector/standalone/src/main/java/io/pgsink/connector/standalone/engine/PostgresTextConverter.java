package io.pgsink.connector.standalone.engine;

import io.debezium.connector.postgresql.UnchangedToastedReplicationMessageColumn;
import io.debezium.spi.converter.CustomConverter;
import io.debezium.spi.converter.RelationalColumn;
import io.pgsink.connector.debezium.TimestampText;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.postgresql.util.PGobject;

import java.nio.charset.StandardCharsets;
import java.sql.Types;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
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
 *     {@code pg_lsn}, {@code tsquery}...), which otherwise arrive as bytes;</li>
 * <li>{@code timestamp}: Debezium's {@code MicroTimestamp} holds microseconds since 1970 in a long,
 *     which ends at 294247-01-10 04:00:54.775807; later timestamps (PostgreSQL's go to 294276) are
 *     saturated and lost. Streamed, Debezium hands this converter the parsed {@code Instant}, which
 *     holds them all; snapshots read the text.</li>
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

    static final Set<String> TYPES = Set.of("bit", "varbit", "box", "circle", "line", "lseg", "path", "polygon",
            "pg_lsn", "tsquery", "txid_snapshot", "pg_snapshot");

    /**
     * The instants Debezium parses {@code infinity} and {@code -infinity} into
     * ({@code PostgresValueConverter.POSITIVE_INFINITY_INSTANT}: pgjdbc's sentinels read as
     * microseconds). The positive one is also the timestamp 294247-01-10 04:00:25.2, which Debezium
     * cannot tell from {@code infinity}.
     */
    static final Instant POSITIVE_INFINITY = Instant.ofEpochSecond(9_223_372_036_825L, 200_000_000);
    static final Instant NEGATIVE_INFINITY = Instant.ofEpochSecond(-9_223_372_036_833L, 600_000_000);

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
        boolean timestamp = !array && type.equals("timestamp");
        if (!array && !timestamp && !TYPES.contains(type)) {
            return;
        }
        SchemaBuilder schema = SchemaBuilder.string();
        if (column.isOptional()) {
            schema.optional();
        }
        if (timestamp) {
            registration.register(schema, this::timestampText);
        }
        else {
            registration.register(schema, this::text);
        }
    }

    /**
     * A {@code timestamp} as PostgreSQL prints it with {@code DateStyle=ISO} (pgjdbc's), so that the
     * streamed and the snapshot text of one value are equal: {@code 294276-12-31 23:59:59.999999},
     * {@code 4714-11-24 00:00:00 BC}, {@code infinity}.
     */
    Object timestampText(Object value)
    {
        LocalDateTime local;
        if (value instanceof Instant instant) {
            if (instant.equals(POSITIVE_INFINITY)) {
                return "infinity";
            }
            if (instant.equals(NEGATIVE_INFINITY)) {
                return "-infinity";
            }
            local = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
        }
        else if (value instanceof LocalDateTime dateTime) {
            local = dateTime;
        }
        else if (value instanceof OffsetDateTime dateTime) {
            // a column default, which pgjdbc parses as UTC; its infinities are OffsetDateTime.MAX and MIN
            if (dateTime.equals(OffsetDateTime.MAX)) {
                return "infinity";
            }
            if (dateTime.equals(OffsetDateTime.MIN)) {
                return "-infinity";
            }
            local = dateTime.toLocalDateTime();
        }
        else {
            return text(value);
        }
        return TimestampText.format(local);
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
