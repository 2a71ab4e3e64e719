package io.pgsink.connector.debezium;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class DebeziumRecordMapperTest
{
    private static final SourcePosition POSITION = new SourcePosition("{\"server\":\"srv\"}", "{\"lsn\":4711}");
    private static final Schema KEY = SchemaBuilder.struct().name("srv.public.orders.Key").field("id", Schema.INT64_SCHEMA).build();
    private static final Schema ROW = SchemaBuilder.struct().name("srv.public.orders.Value")
            .field("id", Schema.INT64_SCHEMA)
            .field("status", SchemaBuilder.string().optional().defaultValue("new").build())
            .field("note", Schema.OPTIONAL_STRING_SCHEMA)
            .build();

    private final DebeziumEnvelopes orders = new DebeziumEnvelopes("public", "orders", KEY, ROW);
    private final DebeziumRecordMapper mapper = new DebeziumRecordMapper();

    private Struct order(long id, String status, String note)
    {
        return orders.row().put("id", id).put("status", status).put("note", note);
    }

    private ChangeEvent map(SourceRecord record)
    {
        return mapper.map(record, POSITION).orElseThrow();
    }

    @Test
    void mapsEveryEnvelopeOperation()
    {
        ChangeEvent insert = map(orders.record("c", orders.key(1L), null, order(1, "new", "a"), 1000));
        assertThat(insert.operation()).isEqualTo(Operation.INSERT);
        assertThat(insert.table()).isEqualTo(TableId.of("public", "orders"));
        assertThat(insert.after()).containsExactly(1L, "new", "a");
        assertThat(insert.sourceTimeMillis()).isEqualTo(1000);
        assertThat(insert.position()).isEqualTo(POSITION);
        assertThat(insert.schema().keyColumns()).containsExactly("id");
        assertThat(insert.schema().columnNames()).containsExactly("id", "status", "note");

        assertThat(map(orders.record("r", orders.key(2L), null, order(2, "paid", null), 1000)).operation()).isEqualTo(Operation.READ);

        ChangeEvent update = map(orders.record("u", orders.key(1L), order(1, "new", "a"), order(1, "paid", "a"), 2000));
        assertThat(update.operation()).isEqualTo(Operation.UPDATE);
        assertThat(update.before()).containsExactly(1L, "new", "a");
        assertThat(update.after()).containsExactly(1L, "paid", "a");

        ChangeEvent updateWithoutBefore = map(orders.record("u", orders.key(1L), null, order(1, "shipped", "a"), 2000));
        assertThat(updateWithoutBefore.before()).isNull();

        ChangeEvent delete = map(orders.record("d", orders.key(1L), orders.row().put("id", 1L), null, 3000));
        assertThat(delete.operation()).isEqualTo(Operation.DELETE);
        assertThat(delete.before()).containsExactly(1L, null, null);

        ChangeEvent truncate = map(orders.truncate(4000));
        assertThat(truncate.operation()).isEqualTo(Operation.TRUNCATE);
        assertThat(truncate.table()).isEqualTo(TableId.of("public", "orders"));
        assertThat(truncate.sourceTimeMillis()).isEqualTo(4000);
    }

    @Test
    void deleteWithoutBeforeImageTakesTheKeyFromTheRecordKey()
    {
        ChangeEvent delete = map(orders.record("d", orders.key(9L), null, null, 3000));
        assertThat(delete.before()).containsExactly(9L, null, null);
    }

    @Test
    void nullIsNotReplacedByTheColumnDefault()
    {
        // Struct.get would return the schema default "new" for this NULL
        ChangeEvent insert = map(orders.record("c", orders.key(1L), null, orders.row().put("id", 1L).put("status", null), 1000));
        assertThat(insert.after()).containsExactly(1L, null, null);
    }

    @Test
    void recordsThatChangeNoRowMapToNothing()
    {
        SourceRecord tombstone = new SourceRecord(Map.of("server", "srv"), Map.of("lsn", 1L), "srv.public.orders", KEY, orders.key(1L), null, null);
        assertThat(mapper.map(tombstone, POSITION)).isEmpty();

        Schema heartbeatSchema = SchemaBuilder.struct().name("io.debezium.connector.common.Heartbeat").field("ts_ms", Schema.INT64_SCHEMA).build();
        SourceRecord heartbeat = new SourceRecord(Map.of("server", "srv"), Map.of("lsn", 2L), "__debezium-heartbeat.srv", null, null, heartbeatSchema, new Struct(heartbeatSchema).put("ts_ms", 5L));
        assertThat(mapper.map(heartbeat, POSITION)).isEmpty();

        assertThat(mapper.map(orders.record("m", null, null, null, 1), POSITION)).isEmpty();
    }

    /**
     * Through Kafka, the old key of a key change's create is what the worker's header converter
     * made of the struct: a map from Connect's default SimpleHeaderConverter, or its JSON text.
     */
    @Test
    void readsTheOldKeyOfAKeyChangeAsHeaderConvertersHandItOver()
    {
        Schema textKey = SchemaBuilder.struct().name("srv.public.codes.Key").field("code", Schema.STRING_SCHEMA).field("n", Schema.INT32_SCHEMA).build();
        for (Object header : List.of(orders.key(1L), Map.of("id", (byte) 1), "{\"id\":1}")) {
            SourceRecord record = orders.record("c", orders.key(2L), null, order(2, "new", UnavailablePlaceholder.DEFAULT), 1000);
            record.headers().add(KeyChangeHeaders.OLD_KEY, header, null);
            ChangeEvent event = map(record);
            assertThat(event.before()).as("old key from %s", header).isNotNull();
            assertThat(event.before()[0]).isEqualTo(1L);
            assertThat(KeyChangeHeaders.oldKey(record)).isEqualTo(orders.key(1L));
        }
        SourceRecord codes = new SourceRecord(Map.of(), Map.of(), "srv.public.codes", textKey, new Struct(textKey).put("code", "b").put("n", 2), null, null);
        codes.headers().add(KeyChangeHeaders.OLD_KEY, "{\"code\":\"a\",\"n\":1}", null);
        assertThat(KeyChangeHeaders.oldKey(codes)).isEqualTo(new Struct(textKey).put("code", "a").put("n", 1));
        // not a key of this record's key schema: no key change to pair
        SourceRecord other = new SourceRecord(Map.of(), Map.of(), "srv.public.codes", textKey, new Struct(textKey).put("code", "b").put("n", 2), null, null);
        other.headers().add(KeyChangeHeaders.OLD_KEY, "{\"id\":1}", null);
        assertThat(KeyChangeHeaders.oldKey(other)).isNull();
    }

    @Test
    void refusesRecordsThatAreNotEnvelopes()
    {
        Schema flattened = SchemaBuilder.struct().name("srv.public.orders.Value").field("id", Schema.INT64_SCHEMA).build();
        SourceRecord record = new SourceRecord(Map.of(), Map.of(), "srv.public.orders", KEY, orders.key(1L), flattened, new Struct(flattened).put("id", 1L));
        assertThatThrownBy(() -> mapper.map(record, POSITION))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                .hasMessageContaining("srv.public.orders")
                .hasMessageContaining("offset {\"lsn\":4711}")
                .hasMessageContaining("ExtractNewRecordState");

        SourceRecord text = new SourceRecord(Map.of(), Map.of(), "topic", null, null, Schema.STRING_SCHEMA, "hello");
        assertThatThrownBy(() -> mapper.map(text, POSITION)).hasMessageContaining("is not a Debezium change event");
    }

    @Test
    void eventsOfOneSchemaVersionShareOneTableSchema()
    {
        ChangeEvent first = map(orders.record("c", orders.key(1L), null, order(1, "new", null), 1));
        ChangeEvent second = map(orders.record("c", orders.key(2L), null, order(2, "new", null), 1));
        assertThat(second.schema()).isSameAs(first.schema());

        // an equal schema built separately (as after a deserializer) still maps to the same instance
        Schema equalRow = SchemaBuilder.struct().name("srv.public.orders.Value")
                .field("id", Schema.INT64_SCHEMA)
                .field("status", SchemaBuilder.string().optional().defaultValue("new").build())
                .field("note", Schema.OPTIONAL_STRING_SCHEMA)
                .build();
        DebeziumEnvelopes equal = new DebeziumEnvelopes("public", "orders", KEY, equalRow);
        ChangeEvent third = map(equal.record("c", equal.key(3L), null, equal.row().put("id", 3L), 1));
        assertThat(third.schema()).isSameAs(first.schema());

        // a new column is a new version
        Schema widerRow = SchemaBuilder.struct().name("srv.public.orders.Value")
                .field("id", Schema.INT64_SCHEMA)
                .field("status", Schema.OPTIONAL_STRING_SCHEMA)
                .field("note", Schema.OPTIONAL_STRING_SCHEMA)
                .field("added", Schema.OPTIONAL_INT32_SCHEMA)
                .build();
        DebeziumEnvelopes wider = new DebeziumEnvelopes("public", "orders", KEY, widerRow);
        ChangeEvent fourth = map(wider.record("c", wider.key(4L), null, wider.row().put("id", 4L).put("added", 7), 1));
        assertThat(fourth.schema()).isNotSameAs(first.schema());
        assertThat(fourth.schema().columnNames()).containsExactly("id", "status", "note", "added");
        assertThat(fourth.after()).containsExactly(4L, null, null, 7);
    }

    @Test
    void tableWithoutKeyHasNoKeyColumns()
    {
        DebeziumEnvelopes log = new DebeziumEnvelopes("public", "log", null, ROW);
        ChangeEvent insert = map(log.record("c", null, null, log.row().put("id", 1L), 1));
        assertThat(insert.schema().hasKey()).isFalse();
    }

    @Test
    void convertsDebeziumTemporalTypes()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("d", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("t_ms", type("io.debezium.time.Time", Schema.Type.INT32))
                .field("t_us", type("io.debezium.time.MicroTime", Schema.Type.INT64))
                .field("t_ns", type("io.debezium.time.NanoTime", Schema.Type.INT64))
                .field("ts_ms", type("io.debezium.time.Timestamp", Schema.Type.INT64))
                .field("ts_us", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("ts_ns", type("io.debezium.time.NanoTimestamp", Schema.Type.INT64))
                .field("tstz", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .field("ttz", type("io.debezium.time.ZonedTime", Schema.Type.STRING))
                .field("iv_iso", type("io.debezium.time.Interval", Schema.Type.STRING))
                .field("iv_us", type("io.debezium.time.MicroDuration", Schema.Type.INT64))
                .field("c_date", org.apache.kafka.connect.data.Date.builder().optional().build())
                .field("c_ts", org.apache.kafka.connect.data.Timestamp.builder().optional().build())
                .build();
        Struct values = new Struct(row)
                .put("id", 1)
                .put("d", (int) LocalDate.of(2024, 2, 29).toEpochDay())
                .put("t_ms", 3_723_004)
                .put("t_us", 86_400_000_000L)
                .put("t_ns", 1_000L)
                .put("ts_ms", -1L)
                .put("ts_us", 1_700_000_000_123_456L)
                .put("ts_ns", 1_000_000_001L)
                .put("tstz", "2024-01-02T03:04:05.123456Z")
                .put("ttz", "10:15:30.5Z")
                .put("iv_iso", "P1Y2M3DT4H5M6.78S")
                .put("iv_us", 3_600_000_000L)
                .put("c_date", java.util.Date.from(LocalDate.of(2020, 1, 1).atStartOfDay().toInstant(ZoneOffset.UTC)))
                .put("c_ts", new java.util.Date(1_000L));
        Object[] after = mapRow(row, values);
        assertThat(after).containsExactly(
                1,
                LocalDate.of(2024, 2, 29),
                LocalTime.of(1, 2, 3, 4_000_000),
                "24:00:00",
                LocalTime.ofNanoOfDay(1_000),
                LocalDateTime.of(1969, 12, 31, 23, 59, 59, 999_000_000),
                LocalDateTime.of(2023, 11, 14, 22, 13, 20, 123_456_000),
                LocalDateTime.of(1970, 1, 1, 0, 0, 1, 1),
                OffsetDateTime.of(2024, 1, 2, 3, 4, 5, 123_456_000, ZoneOffset.UTC),
                OffsetTime.of(10, 15, 30, 500_000_000, ZoneOffset.UTC),
                "P1Y2M3DT4H5M6.78S",
                "3600000000 microseconds",
                LocalDate.of(2020, 1, 1),
                LocalDateTime.of(1970, 1, 1, 0, 0, 1));
    }

    @Test
    void keepsInfiniteDatesAndTimestamps()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("d1", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("d2", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("ts1", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("ts2", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("tz1", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .field("tz2", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .build();
        Struct values = new Struct(row)
                .put("id", 1)
                .put("d1", (int) LocalDate.parse("-5877611-06-21").toEpochDay())
                .put("d2", (int) LocalDate.parse("-5877611-06-22").toEpochDay())
                .put("ts1", 9223372036825200000L)
                .put("ts2", -9223372036832400000L)
                .put("tz1", "infinity")
                .put("tz2", "-infinity");
        assertThat(mapRow(row, values)).containsExactly(1, "infinity", "-infinity", "infinity", "-infinity", "infinity", "-infinity");
    }

    /**
     * PostgreSQL's first and last values of each temporal type, as Debezium 3.6 encodes them
     * (pgoutput streaming, {@code time.precision.mode=adaptive}): all exact, except timestamps
     * after the last one a {@code MicroTimestamp} holds (see {@link #refusesTimestampsAMicroTimestampCannotHold}).
     */
    @Test
    void convertsTheEndsOfPostgresRanges()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("d_min", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("d_max", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("d_bc", type("io.debezium.time.Date", Schema.Type.INT32))
                .field("ts_min", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("ts_last", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("ts_bc", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .field("ts3_max", type("io.debezium.time.Timestamp", Schema.Type.INT64))
                .field("tstz_min", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .field("tstz_max", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .field("t_min", type("io.debezium.time.MicroTime", Schema.Type.INT64))
                .field("t_max", type("io.debezium.time.MicroTime", Schema.Type.INT64))
                .field("ttz_max", type("io.debezium.time.ZonedTime", Schema.Type.STRING))
                .build();
        // timestamp(0) to timestamp(3) are milliseconds, which hold PostgreSQL's whole range
        long lastMillis = LocalDateTime.of(294276, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC) * 1_000 + 999;
        Struct values = new Struct(row)
                .put("id", 1)
                .put("d_min", (int) LocalDate.of(-4713, 11, 24).toEpochDay())
                .put("d_max", (int) LocalDate.of(5874897, 12, 31).toEpochDay())
                .put("d_bc", (int) LocalDate.of(-4712, 1, 1).toEpochDay())
                .put("ts_min", debeziumMicros(LocalDateTime.of(-4713, 11, 24, 0, 0)))
                .put("ts_last", Long.MAX_VALUE - 1)
                .put("ts_bc", debeziumMicros(LocalDateTime.of(-4712, 1, 1, 23, 59, 59, 999_999_000)))
                .put("ts3_max", lastMillis)
                .put("tstz_min", "-4713-11-24T00:00:00Z")
                .put("tstz_max", "+294276-12-31T23:59:59.999999Z")
                .put("t_min", 0L)
                .put("t_max", 86_400_000_000L)
                .put("ttz_max", "23:59:59.999999Z");
        assertThat(mapRow(row, values)).containsExactly(
                1,
                LocalDate.of(-4713, 11, 24),
                LocalDate.of(5874897, 12, 31),
                LocalDate.of(-4712, 1, 1),
                LocalDateTime.of(-4713, 11, 24, 0, 0),
                LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_806_000),
                LocalDateTime.of(-4712, 1, 1, 23, 59, 59, 999_999_000),
                LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_000_000),
                OffsetDateTime.of(-4713, 11, 24, 0, 0, 0, 0, ZoneOffset.UTC),
                OffsetDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000, ZoneOffset.UTC),
                LocalTime.MIDNIGHT,
                "24:00:00",
                OffsetTime.of(23, 59, 59, 999_999_000, ZoneOffset.UTC));
    }

    /**
     * The standalone service sends timestamp columns as PostgreSQL's text (a MicroTimestamp cannot
     * hold the last 30 years); they become the {@code LocalDateTime}s a MicroTimestamp would, so
     * keys of one row meet whichever way they came, and the rest is passed on for PostgreSQL.
     */
    @Test
    void readsTimestampsSentAsPostgresText()
    {
        Schema text = SchemaBuilder.string().optional().parameter(SourceTypes.TYPE_PARAMETER, "TIMESTAMP").build();
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("last", text)
                .field("first", text)
                .field("leap_bc", text)
                .field("fraction", text)
                .field("infinite", text)
                .field("other", text)
                .build();
        Struct values = new Struct(row)
                .put("id", 1)
                .put("last", "294276-12-31 23:59:59.999999")
                .put("first", "4714-11-24 00:00:00 BC")
                .put("leap_bc", "0005-02-29 12:00:00 BC")
                .put("fraction", "2024-01-02 03:04:05.5")
                .put("infinite", "-infinity")
                .put("other", "2024-01-02T03:04:05");
        assertThat(mapRow(row, values)).containsExactly(
                1,
                LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000),
                LocalDateTime.of(-4713, 11, 24, 0, 0),
                LocalDateTime.of(-4, 2, 29, 12, 0),
                LocalDateTime.of(2024, 1, 2, 3, 4, 5, 500_000_000),
                "-infinity",
                "2024-01-02T03:04:05");
        for (Object value : Arrays.copyOfRange(mapRow(row, values), 1, 5)) {
            LocalDateTime timestamp = (LocalDateTime) value;
            assertThat(TimestampText.parse(TimestampText.format(timestamp))).contains(timestamp);
        }
    }

    /**
     * Debezium's {@code Conversions.toEpochMicros} saturates the seconds' microseconds at
     * {@code Long.MAX_VALUE}, then adds the fraction, which wraps: every timestamp after
     * 294247-01-10 04:00:54.775807 with the same fraction gives the same number, so the value
     * cannot be recovered. Such numbers are refused with the table, key and column; they used to
     * be written as {@code infinity}, {@code -infinity} or a year -290308 that PostgreSQL refuses.
     */
    @Test
    void refusesTimestampsAMicroTimestampCannotHold()
    {
        assertThat(debeziumMicros(LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000)))
                .isEqualTo(Long.MIN_VALUE + 999_998);
        assertThat(debeziumMicros(LocalDateTime.of(294276, 12, 31, 23, 59, 59, 1_000))).isEqualTo(Long.MIN_VALUE);
        assertThat(debeziumMicros(LocalDateTime.of(294276, 12, 31, 23, 59, 59))).isEqualTo(Long.MAX_VALUE);
        assertThat(debeziumMicros(LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_807_000))).isEqualTo(Long.MAX_VALUE);
        assertThat(debeziumMicros(LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_808_000))).isEqualTo(Long.MIN_VALUE);
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT64_SCHEMA)
                .field("c_ts", type("io.debezium.time.MicroTimestamp", Schema.Type.INT64))
                .build();
        DebeziumEnvelopes table = new DebeziumEnvelopes("public", "far", KEY, row);
        for (LocalDateTime lost : List.of(
                LocalDateTime.of(294276, 12, 31, 23, 59, 59, 999_999_000),
                LocalDateTime.of(294276, 12, 31, 23, 59, 59),
                LocalDateTime.of(294270, 6, 1, 0, 0, 0, 1_000),
                LocalDateTime.of(294247, 1, 10, 4, 0, 54, 775_808_000))) {
            Struct after = table.row().put("id", 7L).put("c_ts", debeziumMicros(lost));
            SourceRecord record = table.record("c", table.key(7L), null, after, 1);
            assertThatThrownBy(() -> mapper.map(record, POSITION))
                    .as("%s", lost)
                    .isInstanceOfSatisfying(SinkException.class,
                            e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA))
                    .hasMessageContaining("column c_ts of \"public\".\"far\" key (7)")
                    .hasMessageContaining("a timestamp after 294247-01-10 04:00:54.775807")
                    .hasMessageContaining("MicroTimestamp");
        }
    }

    /** {@code io.debezium.time.Conversions.toEpochMicros(Instant)} of Debezium 3.6, which saturates and then wraps. */
    private static long debeziumMicros(LocalDateTime timestamp)
    {
        Instant instant = timestamp.toInstant(ZoneOffset.UTC);
        return TimeUnit.SECONDS.toMicros(instant.getEpochSecond()) + TimeUnit.NANOSECONDS.toMicros(instant.getNano());
    }

    @Test
    void convertsNumbersBitsGeometryAndMaps()
    {
        Schema variableScale = SchemaBuilder.struct().name("io.debezium.data.VariableScaleDecimal")
                .field("scale", Schema.INT32_SCHEMA).field("value", Schema.BYTES_SCHEMA).optional().build();
        Schema point = SchemaBuilder.struct().name("io.debezium.data.geometry.Point")
                .field("x", Schema.FLOAT64_SCHEMA).field("y", Schema.FLOAT64_SCHEMA).field("wkb", Schema.OPTIONAL_BYTES_SCHEMA).optional().build();
        Schema geometry = SchemaBuilder.struct().name("io.debezium.data.geometry.Geometry")
                .field("wkb", Schema.BYTES_SCHEMA).field("srid", Schema.OPTIONAL_INT32_SCHEMA).optional().build();
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("dec", Decimal.builder(2).optional().build())
                .field("vsd", variableScale)
                .field("num_text", Schema.OPTIONAL_STRING_SCHEMA)
                .field("num_inf", SchemaBuilder.string().optional().parameter(SourceTypes.TYPE_PARAMETER, "NUMERIC").build())
                .field("text_inf", Schema.OPTIONAL_STRING_SCHEMA)
                .field("bits8", SchemaBuilder.bytes().name("io.debezium.data.Bits").parameter("length", "8").optional().build())
                .field("varbits", SchemaBuilder.bytes().name("io.debezium.data.Bits").parameter("length", "10")
                        .parameter(SourceTypes.TYPE_PARAMETER, "VARBIT").optional().build())
                .field("bit1", SchemaBuilder.bool().parameter(SourceTypes.TYPE_PARAMETER, "BIT").optional().build())
                .field("flag", Schema.OPTIONAL_BOOLEAN_SCHEMA)
                .field("pt", point)
                .field("geom", geometry)
                .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).optional().build())
                .field("box", SchemaBuilder.bytes().parameter(SourceTypes.TYPE_PARAMETER, "BOX").optional().build())
                .field("raw", SchemaBuilder.bytes().parameter(SourceTypes.TYPE_PARAMETER, "BYTEA").optional().build())
                .field("vec", SchemaBuilder.array(Schema.FLOAT64_SCHEMA).name("io.debezium.data.DoubleVector").optional().build())
                .build();
        Map<String, String> tags = new LinkedHashMap<>();
        tags.put("a\"b", "c\\d");
        tags.put("empty", null);
        byte[] pointWkb = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, -16, 63, 0, 0, 0, 0, 0, 0, 0, 64};
        Struct values = new Struct(row)
                .put("id", 1)
                .put("dec", new BigDecimal("12.30"))
                .put("vsd", new Struct(variableScale).put("scale", 3).put("value", new BigInteger("-123456").toByteArray()))
                .put("num_text", "NaN")
                .put("num_inf", "POSITIVE_INFINITY")
                .put("text_inf", "POSITIVE_INFINITY")
                .put("bits8", new byte[] {0b101})
                .put("varbits", new byte[] {0b101})
                .put("bit1", true)
                .put("flag", true)
                .put("pt", new Struct(point).put("x", 1.5).put("y", -2.0))
                .put("geom", new Struct(geometry).put("wkb", pointWkb).put("srid", 4326))
                .put("tags", tags)
                .put("box", "(1,1),(0,0)".getBytes(StandardCharsets.UTF_8))
                .put("raw", new byte[] {0, 1})
                .put("vec", List.of(1.0, 2.5));
        Object[] after = mapRow(row, values);
        assertThat(after[1]).isEqualTo(new BigDecimal("12.30"));
        assertThat(after[2]).isEqualTo(new BigDecimal("-123.456"));
        assertThat(after[3]).isEqualTo("NaN");
        // decimal.handling.mode=string spells infinity as Debezium's enum name; only numeric columns are translated
        assertThat(after[4]).isEqualTo("Infinity");
        assertThat(after[5]).isEqualTo("POSITIVE_INFINITY");
        assertThat(after[6]).isEqualTo("00000101");
        assertThat(after[7]).isEqualTo("101");
        assertThat(after[8]).isEqualTo("1");
        assertThat(after[9]).isEqualTo(true);
        assertThat(after[10]).isEqualTo("(1.5,-2.0)");
        // little-endian point, type word 1 with the SRID flag, then SRID 4326 (0x10E6)
        assertThat((String) after[11]).startsWith("0101000020e6100000");
        assertThat(after[12]).isEqualTo("\"a\\\"b\"=>\"c\\\\d\", \"empty\"=>NULL");
        assertThat(after[13]).isEqualTo("(1,1),(0,0)");
        assertThat(after[14]).isEqualTo(new byte[] {0, 1});
        assertThat(after[15]).isEqualTo("[1.0,2.5]");
    }

    @Test
    void convertsArraysElementByElement()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("days", SchemaBuilder.array(type("io.debezium.time.Date", Schema.Type.INT32)).optional().build())
                .field("matrix", SchemaBuilder.array(SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).build()).optional().build())
                .build();
        Struct values = new Struct(row)
                .put("id", 1)
                .put("days", Arrays.asList(0, null))
                .put("matrix", List.of(List.of(1, 2), List.of(3, 4)));
        Object[] after = mapRow(row, values);
        assertThat(after[1]).isEqualTo(Arrays.asList(LocalDate.EPOCH, null));
        assertThat(after[2]).isEqualTo(List.of(List.of(1, 2), List.of(3, 4)));
    }

    @Test
    void recognizesTheUnavailablePlaceholderInEveryShape()
    {
        String placeholder = UnavailablePlaceholder.DEFAULT;
        byte[] bytes = placeholder.getBytes(StandardCharsets.UTF_8);
        List<Integer> integers = new ArrayList<>();
        List<Long> longs = new ArrayList<>();
        for (byte b : bytes) {
            integers.add((int) b);
            longs.add((long) b);
        }
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT32_SCHEMA)
                .field("text", Schema.OPTIONAL_STRING_SCHEMA)
                .field("json", SchemaBuilder.string().name("io.debezium.data.Json").optional().build())
                .field("bytea", Schema.OPTIONAL_BYTES_SCHEMA)
                .field("buffer", Schema.OPTIONAL_BYTES_SCHEMA)
                .field("texts", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build())
                .field("byteas", SchemaBuilder.array(Schema.OPTIONAL_BYTES_SCHEMA).optional().build())
                .field("ints", SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).optional().build())
                .field("longs", SchemaBuilder.array(Schema.OPTIONAL_INT64_SCHEMA).optional().build())
                .field("uuids", SchemaBuilder.array(SchemaBuilder.string().name("io.debezium.data.Uuid").optional().build()).optional().build())
                .field("hstore", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).optional().build())
                .field("other", Schema.OPTIONAL_STRING_SCHEMA)
                .build();
        Struct values = new Struct(row)
                .put("id", 1)
                .put("text", placeholder)
                .put("json", placeholder)
                .put("bytea", bytes)
                .put("buffer", ByteBuffer.wrap(bytes))
                .put("texts", List.of(placeholder))
                .put("byteas", List.of(bytes))
                .put("ints", integers)
                .put("longs", longs)
                .put("uuids", List.of(UUID.nameUUIDFromBytes(bytes).toString()))
                .put("hstore", Map.of(placeholder, placeholder))
                .put("other", placeholder + " ");
        Object[] after = mapRow(row, values);
        for (int i = 1; i <= 10; i++) {
            assertThat(after[i]).as("column %s", row.fields().get(i).name()).isSameAs(UnavailableValue.INSTANCE);
        }
        assertThat(after[11]).isEqualTo(placeholder + " ");
    }

    @Test
    void honoursAConfiguredPlaceholder()
    {
        DebeziumRecordMapper custom = new DebeziumRecordMapper(new UnavailablePlaceholder("<toast>"));
        ChangeEvent event = custom.map(orders.record("u", orders.key(1L), null, order(1, "paid", "<toast>"), 1), POSITION).orElseThrow();
        assertThat(event.after()[2]).isSameAs(UnavailableValue.INSTANCE);
        ChangeEvent defaultPlaceholder = custom.map(orders.record("u", orders.key(1L), null, order(1, "paid", UnavailablePlaceholder.DEFAULT), 1), POSITION).orElseThrow();
        assertThat(defaultPlaceholder.after()[2]).isEqualTo(UnavailablePlaceholder.DEFAULT);
    }

    @Test
    void errorsNameTableColumnKeyAndPosition()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", Schema.INT64_SCHEMA)
                .field("tstz", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .build();
        DebeziumEnvelopes table = new DebeziumEnvelopes("sales", "Orders", KEY, row);
        SourceRecord record = table.record("c", table.key(42L), null, table.row().put("id", 42L).put("tstz", "yesterday"), 1);
        assertThatThrownBy(() -> mapper.map(record, POSITION))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.DATA))
                .hasMessageContaining("column tstz")
                .hasMessageContaining("\"sales\".\"Orders\"")
                .hasMessageContaining("key (42)")
                .hasMessageContaining("offset {\"lsn\":4711}");

        Schema unsupported = SchemaBuilder.struct()
                .field("id", Schema.INT64_SCHEMA)
                .field("nested", SchemaBuilder.struct().name("my.Struct").field("a", Schema.INT32_SCHEMA).optional().build())
                .build();
        DebeziumEnvelopes nested = new DebeziumEnvelopes("public", "nested", KEY, unsupported);
        assertThatThrownBy(() -> mapper.map(nested.record("c", nested.key(1L), null, nested.row().put("id", 1L), 1), POSITION))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                .hasMessageContaining("Column nested of \"public\".\"nested\"")
                .hasMessageContaining("my.Struct");
    }

    @Test
    void columnTypesComeFromPropagatedSourceTypes()
    {
        Schema row = SchemaBuilder.struct().optional()
                .field("id", SchemaBuilder.int64().parameter(SourceTypes.TYPE_PARAMETER, "INT8").build())
                .field("name", SchemaBuilder.string().optional().parameter(SourceTypes.TYPE_PARAMETER, "VARCHAR").parameter(SourceTypes.LENGTH_PARAMETER, "20").build())
                .field("price", SchemaBuilder.string().optional().parameter(SourceTypes.TYPE_PARAMETER, "NUMERIC")
                        .parameter(SourceTypes.LENGTH_PARAMETER, "10").parameter(SourceTypes.SCALE_PARAMETER, "2").build())
                .field("scores", SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA).optional().parameter(SourceTypes.TYPE_PARAMETER, "_INT4").build())
                .field("guessed", type("io.debezium.time.ZonedTimestamp", Schema.Type.STRING))
                .build();
        DebeziumEnvelopes table = new DebeziumEnvelopes("public", "typed", KEY, row);
        ChangeEvent event = map(table.record("c", table.key(1L), null, table.row().put("id", 1L), 1));
        assertThat(event.schema().columns()).extracting(column -> column.typeName())
                .containsExactly("int8", "varchar(20)", "numeric(10,2)", "int4[]", "timestamptz");
        assertThat(event.schema().columns().get(0).optional()).isFalse();
        assertThat(event.schema().columns().get(1).optional()).isTrue();
    }

    private Object[] mapRow(Schema row, Struct values)
    {
        Schema key = SchemaBuilder.struct().field("id", row.field("id").schema()).build();
        DebeziumEnvelopes table = new DebeziumEnvelopes("public", "t" + row.fields().size(), key, row);
        Optional<ChangeEvent> event = mapper.map(table.record("c", new Struct(key).put("id", values.get("id")), null, values, 1), POSITION);
        return event.orElseThrow().after();
    }

    private static Schema type(String name, Schema.Type type)
    {
        return new SchemaBuilder(type).name(name).optional().build();
    }
}
