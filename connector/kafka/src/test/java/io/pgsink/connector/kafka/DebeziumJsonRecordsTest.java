package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.DebeziumEnvelopes;
import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Headers;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.jetbrains.annotations.Nullable;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code record.format=debezium-json} must give the mapper exactly what {@code JsonConverter} gives
 * it: the same records, written by {@code JsonConverter} with {@code schemas.enable=true} as a
 * Debezium source connector's worker writes them, go through {@code JsonConverter} (the connect
 * format) and through {@link DebeziumJsonRecords} (the bytes), each into its own
 * {@link SinkRecordMapper}, and must give equal {@link ChangeEvent}s: every column type of the type
 * table (as Debezium's schemas describe them, semantic types, source-type parameters and defaults
 * included), TOAST placeholders, key changes, tombstones, truncates, records flattened by
 * {@code ExtractNewRecordState} on the source side.
 */
class DebeziumJsonRecordsTest
{
    private static final String TOPIC = "srv.public.types";
    private static final Schema KEY = SchemaBuilder.struct().name("srv.public.types.Key").field("id", Schema.INT64_SCHEMA).build();

    /** One column per type of the type table (DataTypesIT), as Debezium's PostgreSQL connector describes it, with sample values. */
    private record Column(String name, Schema schema, List<Object> values) {}

    private static final List<Column> COLUMNS = List.of(
            new Column("c_int2", source(SchemaBuilder.int16(), "INT2").optional().build(), List.of((short) -32768, (short) 32767, (short) 0)),
            new Column("c_int4", source(SchemaBuilder.int32(), "INT4").optional().build(), List.of(Integer.MIN_VALUE, Integer.MAX_VALUE, 7)),
            new Column("c_int8", source(SchemaBuilder.int64(), "INT8").optional().build(), List.of(Long.MIN_VALUE, Long.MAX_VALUE, 42L)),
            new Column("c_byte", SchemaBuilder.int8().optional().build(), List.of((byte) -128, (byte) 127)),
            new Column("c_float4", source(SchemaBuilder.float32(), "FLOAT4").optional().build(), List.of(-0.0f, 1.5e-10f, 3.4028235e38f)),
            new Column("c_float8", source(SchemaBuilder.float64(), "FLOAT8").optional().build(), List.of(-1.7976931348623157e308, 0.1, Double.MIN_VALUE)),
            new Column("c_numeric", variableScaleDecimal(), List.of(
                    variableScale(new BigDecimal("123456789012345678901234567890.123456789")), variableScale(new BigDecimal("1E-20")), variableScale(new BigDecimal("-0.000")))),
            new Column("c_numeric_text", source(SchemaBuilder.string(), "NUMERIC").optional().build(), List.of("NAN", "POSITIVE_INFINITY", "-12.50")),
            new Column("c_decimal", source(Decimal.builder(2).parameter("connect.decimal.precision", "12"), "NUMERIC").optional().build(),
                    List.of(new BigDecimal("1.50"), new BigDecimal("-0.01"), new BigDecimal("9999999999.99"))),
            new Column("c_money", Decimal.builder(2).optional().build(), List.of(new BigDecimal("12.34"), new BigDecimal("-1000000.50"))),
            new Column("c_bool", source(SchemaBuilder.bool(), "BOOL").optional().build(), List.of(true, false)),
            new Column("c_bit1", source(SchemaBuilder.bool(), "BIT").optional().build(), List.of(true, false)),
            new Column("c_text", source(SchemaBuilder.string(), "TEXT").optional().build(), List.of("", "quote\" comma, backslash\\ tab\t", "new\nline", "ünïcødé ✓ 日本 😀👍🏽 \u200b \u0000",
                    UnavailablePlaceholder.DEFAULT)),
            new Column("c_varchar", source(SchemaBuilder.string(), "VARCHAR").parameter("__debezium.source.column.length", "10").optional().defaultValue("CURRENT_USER").build(),
                    List.of("short", " padded ")),
            new Column("c_bytea", source(SchemaBuilder.bytes(), "BYTEA").optional().build(), List.of(new byte[0], new byte[] {0, 1, (byte) 0xff, '\\'},
                    UnavailablePlaceholder.DEFAULT.getBytes(StandardCharsets.UTF_8))),
            new Column("c_date", source(SchemaBuilder.int32().name("io.debezium.time.Date").version(1), "DATE").optional().defaultValue(0).build(), List.of(0, -719_162, 2_932_896)),
            new Column("c_time", SchemaBuilder.int64().name("io.debezium.time.MicroTime").version(1).optional().build(), List.of(0L, 86_399_999_999L)),
            new Column("c_timetz", SchemaBuilder.string().name("io.debezium.time.ZonedTime").version(1).optional().build(), List.of("10:15:30.123456Z", "23:59:59Z")),
            new Column("c_timestamp", SchemaBuilder.int64().name("io.debezium.time.MicroTimestamp").version(1).optional().build(), List.of(1_700_000_000_123_456L, -62_135_596_800_000_000L)),
            new Column("c_timestamp3", SchemaBuilder.int64().name("io.debezium.time.Timestamp").version(1).optional().build(), List.of(1_700_000_000_123L)),
            new Column("c_timestamptz", SchemaBuilder.string().name("io.debezium.time.ZonedTimestamp").version(1).optional().build(), List.of("2023-11-14T22:13:20.123456Z", "infinity")),
            new Column("c_interval", SchemaBuilder.int64().name("io.debezium.time.MicroDuration").version(1).optional().build(), List.of(0L, 3_600_000_000L, -1L)),
            new Column("c_uuid", SchemaBuilder.string().name("io.debezium.data.Uuid").version(1).optional().build(), List.of("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
            new Column("c_json", SchemaBuilder.string().name("io.debezium.data.Json").version(1).optional().defaultValue("{}").build(), List.of("{\"a\": [1, 2.5, null]}", "[]")),
            new Column("c_xml", SchemaBuilder.string().name("io.debezium.data.Xml").version(1).optional().build(), List.of("<a b=\"c\">d</a>")),
            new Column("c_bits", SchemaBuilder.bytes().name("io.debezium.data.Bits").version(1).parameter("length", "10").optional().build(), List.of(new byte[] {5, 2}, new byte[] {0, 0})),
            new Column("c_point", point(), List.of(new Struct(point()).put("x", 1.5).put("y", -2.25).put("wkb", new byte[] {1, 1, 0, 0, 0}))),
            new Column("c_geometry", geometry(), List.of(new Struct(geometry()).put("wkb", new byte[] {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xf0, 0x3f}).put("srid", 4326))),
            new Column("c_int4_array", source(SchemaBuilder.array(Schema.OPTIONAL_INT32_SCHEMA), "_INT4").optional().build(), List.of(List.of(1, 2, 3), new ArrayList<>(java.util.Arrays.asList(1, null)))),
            new Column("c_text_array", source(SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA), "_TEXT").optional().build(), List.of(List.of("a", "b,c", "\"d\""), List.of(UnavailablePlaceholder.DEFAULT))),
            new Column("c_hstore", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).optional().build(), List.of(mapOf("k", "v", "n", null), Map.of())),
            new Column("c_enum", SchemaBuilder.string().name("io.debezium.data.Enum").version(1).parameter("allowed", "a,b").optional().build(), List.of("a", "b")),
            new Column("c_ltree", SchemaBuilder.string().name("io.debezium.data.Ltree").version(1).optional().build(), List.of("top.science.astronomy")),
            new Column("c_vector", SchemaBuilder.array(Schema.FLOAT64_SCHEMA).name("io.debezium.data.DoubleVector").version(1).optional().build(), List.of(List.of(1.0, -2.5, 1e300))),
            new Column("c_connect_date", Date.builder().optional().build(), List.of(new java.util.Date(0), new java.util.Date(86_400_000L * 19_000))),
            new Column("c_connect_time", Time.builder().optional().build(), List.of(new java.util.Date(3_723_004))),
            new Column("c_connect_timestamp", Timestamp.builder().optional().build(), List.of(new java.util.Date(1_700_000_000_123L))),
            new Column("c_box", source(SchemaBuilder.bytes(), "BOX").optional().build(), List.of("(1,1),(0,0)".getBytes(StandardCharsets.UTF_8))),
            new Column("c_defaulted", SchemaBuilder.string().defaultValue("open").optional().build(), List.of("closed")),
            new Column("c_required", SchemaBuilder.string().defaultValue("fallback").build(), List.of("set")));

    private static final Schema ROW;

    static {
        SchemaBuilder row = SchemaBuilder.struct().name("srv.public.types.Value").field("id", Schema.INT64_SCHEMA);
        for (Column column : COLUMNS) {
            row.field(column.name(), column.schema());
        }
        ROW = row.build();
    }

    private final DebeziumEnvelopes types = new DebeziumEnvelopes("public", "types", KEY, ROW);
    private final JsonConverter keyWriter = converter(true);
    private final JsonConverter valueWriter = converter(false);
    private final JsonConverter keyReader = converter(true);
    private final JsonConverter valueReader = converter(false);
    private final SimpleHeaderConverter headers = new SimpleHeaderConverter();
    private final SinkRecordMapper structMapper = mapper(Map.of());
    private final SinkRecordMapper bytesMapper = mapper(Map.of());
    private final DebeziumJsonRecords bytes = new DebeziumJsonRecords();
    private final SinkRecordMapper directMapper = mapper(Map.of());
    private final DebeziumJsonRecords direct = new DebeziumJsonRecords();
    /** How many records {@link DebeziumJsonRecords#readDirect} read. */
    private int readDirectly;
    private long offset;

    @Test
    void everyTypeOfTheTypeTableGivesTheSameEvents()
    {
        int rows = COLUMNS.stream().mapToInt(column -> column.values().size()).max().orElseThrow();
        Struct previous = null;
        for (int i = 0; i < rows; i++) {
            Struct row = row(i + 1, i);
            assertSameEvents(types.record(previous == null ? "r" : "c", types.key(i + 1L), null, row, 1000 + i), null);
            assertSameEvents(types.record("u", types.key(i + 1L), row, row(i + 1, i + 1), 2000 + i), null);
            previous = row;
        }
        // every value null (but the key, and the required column: its default)
        Struct nulls = types.row().put("id", 99L).put("c_required", "fallback");
        assertSameEvents(types.record("c", types.key(99L), null, nulls, 3000), null);
        assertSameEvents(types.record("d", types.key(99L), nulls, null, 3001), null);
        // Debezium's tombstone after the delete, and a truncate
        assertSameEvents(new SourceRecord(Map.of(), Map.of(), TOPIC, KEY, types.key(99L), null, null), null);
        SourceRecord truncate = types.truncate(4000);
        // Debezium's truncates have no key, nor key schema
        assertSameEvents(new SourceRecord(Map.of(), Map.of(), TOPIC, null, null, truncate.valueSchema(), truncate.value()), null);
        // all but the first record of the schema, the tombstone and the truncate
        assertThat(readDirectly).isEqualTo(2 * rows + 2 - 1);
    }

    @Test
    void keyChangesGiveTheSameEvents()
    {
        Struct oldRow = row(5, 0);
        Struct newRow = row(6, 1);
        ConnectHeaders deleteHeaders = new ConnectHeaders();
        deleteHeaders.add(KeyChangeHeaders.NEW_KEY, types.key(6L), KEY);
        ConnectHeaders createHeaders = new ConnectHeaders();
        createHeaders.add(KeyChangeHeaders.OLD_KEY, types.key(5L), KEY);
        assertSameEvents(types.record("c", types.key(5L), null, oldRow, 1000), null);
        assertSameEvents(types.record("d", types.key(5L), oldRow, null, 2000), deleteHeaders);
        assertSameEvents(new SourceRecord(Map.of(), Map.of(), TOPIC, KEY, types.key(5L), null, null), deleteHeaders);
        assertSameEvents(types.record("c", types.key(6L), null, newRow, 2000), createHeaders);
    }

    @Test
    void recordsFlattenedOnTheSourceSideGiveTheSameEvents()
    {
        SchemaBuilder builder = SchemaBuilder.struct().name("srv.public.types.Value");
        for (Field field : ROW.fields()) {
            builder.field(field.name(), field.schema());
        }
        Schema flattened = builder.field("__op", Schema.OPTIONAL_STRING_SCHEMA).field("__deleted", Schema.OPTIONAL_STRING_SCHEMA)
                .field("__source_schema", Schema.OPTIONAL_STRING_SCHEMA).field("__source_table", Schema.OPTIONAL_STRING_SCHEMA).optional().build();
        for (String operation : List.of("c", "u", "r", "d")) {
            Struct value = new Struct(flattened);
            Struct row = row(7, 1);
            for (Field field : ROW.fields()) {
                value.put(field.name(), row.getWithoutDefault(field.name()));
            }
            value.put("__op", operation).put("__deleted", String.valueOf(operation.equals("d"))).put("__source_schema", "public").put("__source_table", "types");
            assertSameEvents(new SourceRecord(Map.of(), Map.of(), TOPIC, KEY, types.key(7L), flattened, value), null);
        }
        // delete.tombstone.handling.mode=tombstone: the value schema, and no value ("payload": null); routed by topic, as such a delete names no table
        assertSameEvents(new SourceRecord(Map.of(), Map.of(), TOPIC, KEY, types.key(7L), flattened, null), null, Map.of("target.table.name.format", "${topic}"));
    }

    @Property(tries = 200)
    void anyValuesGiveTheSameEvents(@ForAll("rows") Map<String, Object> values)
    {
        Struct row = types.row().put("id", 1L).put("c_required", "set");
        values.forEach(row::put);
        assertSameEvents(types.record("c", types.key(1L), null, row, 1000), null);
    }

    @Provide
    Arbitrary<Map<String, Object>> rows()
    {
        Arbitrary<String> text = Arbitraries.strings().all().ofMaxLength(40);
        return Combinators.combine(
                Arbitraries.longs().injectNull(0.1),
                Arbitraries.doubles().withSpecialValue(Double.MIN_VALUE).withSpecialValue(-0.0).injectNull(0.1),
                Arbitraries.floats().withSpecialValue(Float.MAX_VALUE).withSpecialValue(Float.MIN_VALUE).injectNull(0.1),
                text.injectNull(0.1),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(20).injectNull(0.1),
                Arbitraries.bigDecimals().ofScale(2).between(new BigDecimal("-9999999999.99"), new BigDecimal("9999999999.99")).injectNull(0.1),
                Arbitraries.bigDecimals().ofScale(9).between(new BigDecimal("-1e20"), new BigDecimal("1e20")).map(DebeziumJsonRecordsTest::variableScale).injectNull(0.1),
                text.list().ofMaxSize(4).injectNull(0.1)
        ).as((int8, float8, float4, string, byteArray, decimal, numeric, strings) -> {
            Map<String, Object> values = new LinkedHashMap<>();
            values.put("c_int8", int8);
            values.put("c_float8", float8);
            values.put("c_float4", float4);
            values.put("c_text", string);
            values.put("c_bytea", byteArray);
            values.put("c_decimal", decimal);
            values.put("c_numeric", numeric);
            values.put("c_text_array", strings);
            return values;
        });
    }

    /**
     * The one difference: Jackson writes a non-finite float as the string "NaN", "Infinity" or
     * "-Infinity", which JsonConverter reads back as 0.0; the bytes path reads what was written.
     */
    @Test
    void nonFiniteFloatsAreReadAsWritten()
    {
        Struct row = types.row().put("id", 1L).put("c_required", "set").put("c_float4", Float.NaN).put("c_float8", Double.NEGATIVE_INFINITY);
        SourceRecord record = types.record("c", types.key(1L), null, row, 1000);
        byte[] value = valueWriter.fromConnectData(TOPIC, record.valueSchema(), record.value());
        Struct read = (Struct) bytes.read(new SinkRecord(TOPIC, 0, null, null, null, value, 1)).value();
        assertThat(read.getStruct("after").getFloat32("c_float4")).isNaN();
        assertThat(read.getStruct("after").getFloat64("c_float8")).isEqualTo(Double.NEGATIVE_INFINITY);
        Struct converted = (Struct) valueReader.toConnectData(TOPIC, value).value();
        assertThat(converted.getStruct("after").getFloat64("c_float8")).as("JsonConverter").isZero();
    }

    @Test
    void badInputIsNamedByPositionAndReasonWithoutValues()
    {
        SinkRecord notJson = new SinkRecord(TOPIC, 3, null, null, null, "{\"schema\": secret-value".getBytes(StandardCharsets.UTF_8), 17);
        assertThatThrownBy(() -> bytes.read(notJson))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH))
                .hasMessageStartingWith("Cannot read the value of the record of topic srv.public.types partition 3 at offset 17 as Debezium JSON with schema (record.format=debezium-json): "
                        + "it is not valid JSON (near byte")
                .hasMessageNotContaining("secret");

        SinkRecord schemaless = new SinkRecord(TOPIC, 3, null, null, null, "{\"id\": 1, \"secret\": \"value\"}".getBytes(StandardCharsets.UTF_8), 18);
        assertThatThrownBy(() -> bytes.read(schemaless))
                .hasMessageEndingWith("it has a field other than \"schema\" and \"payload\"; schemaless JSON (schemas.enable=false) cannot be read");

        SinkRecord wrongType = new SinkRecord(TOPIC, 3, null, null, null,
                "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"id\",\"type\":\"int64\"}]},\"payload\":{\"id\":\"secret\"}}".getBytes(StandardCharsets.UTF_8), 19);
        assertThatThrownBy(() -> bytes.read(wrongType))
                .hasMessageEndingWith("as Debezium JSON with schema (record.format=debezium-json): field id: a INT64 is a JSON string")
                .hasMessageNotContaining("secret");

        SinkRecord tooLarge = new SinkRecord(TOPIC, 3, null, null, null,
                "{\"schema\":{\"type\":\"int32\"},\"payload\":12345678901}".getBytes(StandardCharsets.UTF_8), 20);
        assertThatThrownBy(() -> bytes.read(tooLarge))
                .hasMessageContaining("a number is out of the range of its schema's type")
                .hasMessageNotContaining("12345678901");

        SinkRecord struct = new SinkRecord(TOPIC, 3, KEY, types.key(1L), null, null, 21);
        assertThatThrownBy(() -> bytes.read(struct))
                .isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.CONFIG))
                .hasMessage("The key of the record of topic srv.public.types partition 3 at offset 21 is a org.apache.kafka.connect.data.Struct, not bytes: "
                        + "record.format=debezium-json needs key.converter=org.apache.kafka.connect.converters.ByteArrayConverter (or StringConverter); "
                        + "the worker's converter is used where the connector sets none");
    }

    @Test
    void schemasAreReadInAnyLayoutAndText()
    {
        String json = "{ \"payload\" : {\"id\": 3, \"n\": null}, \"schema\" : {\"optional\": false, \"fields\": [{\"type\": \"int64\", \"field\": \"id\"},"
                + " {\"field\": \"n\", \"default\": 5, \"type\": \"int32\", \"optional\": true}], \"type\": \"struct\", \"name\": \"x\"} }\n";
        SchemaAndValue expected = valueReader.toConnectData(TOPIC, json.getBytes(StandardCharsets.UTF_8));
        SinkRecord read = bytes.read(new SinkRecord(TOPIC, 0, null, null, null, json, 1));
        assertThat(read.valueSchema()).isEqualTo(expected.schema());
        assertThat(read.value()).isEqualTo(expected.value());
        assertThat(((Struct) read.value()).get("n")).isEqualTo(5);
    }

    /**
     * {@link ReadAhead} (the reading thread of a put) gives, record by record, what reading on the
     * task's thread gives: the same events and the same failures at the same records, over more
     * records than a chunk, with every type, tombstones, a key change, a truncate, a schema change
     * and malformed JSON mid-stream; a failure names topic, partition and offset, never a value.
     */
    @Test
    void readingAheadGivesWhatReadingInTurnGives()
    {
        Schema wider = SchemaBuilder.struct().name("srv.public.types.Value").field("id", Schema.INT64_SCHEMA)
                .field("added", Schema.OPTIONAL_STRING_SCHEMA).optional().build();
        DebeziumEnvelopes changed = new DebeziumEnvelopes("public", "types", KEY, wider);
        ConnectHeaders deleteHeaders = new ConnectHeaders();
        deleteHeaders.add(KeyChangeHeaders.NEW_KEY, types.key(100_000L), KEY);
        ConnectHeaders createHeaders = new ConnectHeaders();
        createHeaders.add(KeyChangeHeaders.OLD_KEY, types.key(7L), KEY);
        List<SinkRecord> records = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            long id = i % 50;
            switch (i % 7) {
                case 0, 1, 2 -> records.add(bytesRecord(types.record(i < 50 ? "r" : "c", types.key(id), null, row(id, i), 1000 + i), null, i));
                case 3 -> records.add(bytesRecord(types.record("u", types.key(id), row(id, i), row(id, i + 1), 1000 + i), null, i));
                case 4 -> records.add(bytesRecord(types.record("d", types.key(id), row(id, i), null, 1000 + i), null, i));
                case 5 -> records.add(bytesRecord(new SourceRecord(Map.of(), Map.of(), TOPIC, KEY, types.key(id), null, null), null, i));
                default -> records.add(i % 3 == 0
                        ? new SinkRecord(TOPIC, 1, null, null, null, "{\"schema\": secret-value".getBytes(StandardCharsets.UTF_8), i)
                        : bytesRecord(changed.record("c", types.key(id), null, new Struct(wider).put("id", id).put("added", "x"), 1000 + i), null, i));
            }
        }
        records.add(bytesRecord(types.record("d", types.key(7L), row(7, 0), null, 5000), deleteHeaders, 700));
        records.add(bytesRecord(types.record("c", types.key(100_000L), null, row(100_000L, 1), 5000), createHeaders, 701));
        SourceRecord truncate = types.truncate(6000);
        records.add(bytesRecord(new SourceRecord(Map.of(), Map.of(), TOPIC, null, null, truncate.valueSchema(), truncate.value()), null, 702));

        KafkaSinkConfig config = KafkaSinkConfig.parse(Map.of("name", "test", "target.url", "jdbc:postgresql://localhost/test",
                "record.format", "debezium-json"));
        // in turn, and through the structs: what the reader gave before it read ahead and without them
        RecordReader inTurn = new RecordReader(config, new SinkRecordMapper(config), null, false);
        RecordReader aheadReader = new RecordReader(config, new SinkRecordMapper(config), null);
        int failures = 0;
        try (ReadAhead ahead = new ReadAhead("test", aheadReader); ReadAhead.Batch batch = ahead.read(records)) {
            for (int i = 0; i < records.size(); i++) {
                SinkRecord record = records.get(i);
                SourcePosition position = KafkaPositions.position(TOPIC + "-" + record.kafkaPartition(), record.kafkaOffset());
                RecordReader.Decoded decoded = batch.get(i);
                Optional<ChangeEvent> expected;
                try {
                    expected = inTurn.read(record, position);
                }
                catch (SinkException e) {
                    failures++;
                    assertThatThrownBy(() -> aheadReader.take(decoded, record)).as("record " + i)
                            .isInstanceOfSatisfying(SinkException.class, failure -> assertThat(failure.errorCode()).isEqualTo(e.errorCode()))
                            .hasMessage(e.getMessage())
                            .hasMessageContaining("topic srv.public.types partition 1 at offset " + i)
                            .hasMessageNotContaining("secret");
                    continue;
                }
                Optional<ChangeEvent> actual = aheadReader.take(decoded, record);
                assertThat(actual.isPresent()).as("record " + i).isEqualTo(expected.isPresent());
                if (expected.isPresent()) {
                    assertThat(actual.get()).as("record " + i).usingRecursiveComparison().isEqualTo(expected.get());
                }
            }
        }
        assertThat(failures).isEqualTo(34);
    }

    /** A record as a worker's ByteArrayConverter hands it over (headers as SimpleHeaderConverter reads them). */
    private SinkRecord bytesRecord(SourceRecord source, @Nullable Headers recordHeaders, long at)
    {
        byte[] key = keyWriter.fromConnectData(TOPIC, source.keySchema(), source.key());
        byte[] value = valueWriter.fromConnectData(TOPIC, source.valueSchema(), source.value());
        return new SinkRecord(TOPIC, 1, Schema.OPTIONAL_BYTES_SCHEMA, key, Schema.OPTIONAL_BYTES_SCHEMA, value, at, null, null, throughKafka(recordHeaders));
    }

    /** Headers through Kafka as a worker's default header converter writes and reads them. */
    private ConnectHeaders throughKafka(@Nullable Headers recordHeaders)
    {
        ConnectHeaders read = new ConnectHeaders();
        if (recordHeaders != null) {
            recordHeaders.forEach(header -> read.add(header.key(), headers.toConnectHeader(TOPIC, header.key(), headers.fromConnectHeader(TOPIC, header.key(), header.schema(), header.value()))));
        }
        return read;
    }

    /** Maps the record both ways and compares the events. */
    private void assertSameEvents(SourceRecord source, @Nullable Headers recordHeaders)
    {
        assertSameEvents(source, recordHeaders, Map.of());
    }

    private void assertSameEvents(SourceRecord source, @Nullable Headers recordHeaders, Map<String, String> mapperSettings)
    {
        offset++;
        byte[] key = keyWriter.fromConnectData(TOPIC, source.keySchema(), source.key());
        byte[] value = valueWriter.fromConnectData(TOPIC, source.valueSchema(), source.value());
        ConnectHeaders read = throughKafka(recordHeaders);
        SchemaAndValue structKey = keyReader.toConnectData(TOPIC, key);
        SchemaAndValue structValue = valueReader.toConnectData(TOPIC, value);
        SinkRecord structRecord = new SinkRecord(TOPIC, 0, structKey.schema(), structKey.value(), structValue.schema(), structValue.value(), offset, null, null, read);
        SinkRecord bytesRecord = new SinkRecord(TOPIC, 0, Schema.OPTIONAL_BYTES_SCHEMA, key, Schema.OPTIONAL_BYTES_SCHEMA, value, offset, null, null, read);

        SourcePosition position = new SourcePosition(TOPIC + "-0", String.valueOf(offset));
        SinkRecord readRecord = bytes.read(bytesRecord);
        assertThat(readRecord.key()).as("key").isEqualTo(structRecord.key());
        assertThat(readRecord.keySchema()).as("key schema").isEqualTo(structRecord.keySchema());
        assertThat(readRecord.valueSchema()).as("value schema").isEqualTo(structRecord.valueSchema());
        Optional<ChangeEvent> expected = (mapperSettings.isEmpty() ? structMapper : mapper(mapperSettings)).map(structRecord, position);
        Optional<ChangeEvent> actual = (mapperSettings.isEmpty() ? bytesMapper : mapper(mapperSettings)).map(readRecord, position);
        assertThat(actual.isPresent()).isEqualTo(expected.isPresent());
        if (expected.isPresent()) {
            assertThat(actual.get()).usingRecursiveComparison().isEqualTo(expected.get());
        }
        if (mapperSettings.isEmpty()) {
            // straight from the bytes where it can, else through the structs as above
            ChangeEvent event = direct.readDirect(bytesRecord, position, directMapper);
            if (event != null) {
                readDirectly++;
            }
            Optional<ChangeEvent> directly = event != null ? Optional.of(event) : directMapper.map(direct.read(bytesRecord), position);
            assertThat(directly.isPresent()).as("read directly").isEqualTo(expected.isPresent());
            if (expected.isPresent()) {
                assertThat(directly.get()).as("read directly").usingRecursiveComparison().isEqualTo(expected.get());
            }
        }
    }

    private Struct row(long id, int index)
    {
        Struct row = types.row().put("id", id);
        for (Column column : COLUMNS) {
            row.put(column.name(), column.values().get(index % column.values().size()));
        }
        return row;
    }

    private static SinkRecordMapper mapper(Map<String, String> settings)
    {
        Map<String, String> properties = new HashMap<>(settings);
        properties.put("name", "test");
        properties.put("target.url", "jdbc:postgresql://localhost/test");
        return new SinkRecordMapper(KafkaSinkConfig.parse(properties));
    }

    private static JsonConverter converter(boolean isKey)
    {
        JsonConverter converter = new JsonConverter();
        // as docs/guides/kafka-connect.md requires of the struct path: a NULL of a column with a default stays NULL
        converter.configure(Map.of("schemas.enable", "true", "replace.null.with.default", "false"), isKey);
        return converter;
    }

    private static SchemaBuilder source(SchemaBuilder builder, String type)
    {
        return builder.parameter("__debezium.source.column.type", type);
    }

    private static Schema variableScaleDecimal()
    {
        return SchemaBuilder.struct().name("io.debezium.data.VariableScaleDecimal").version(1).optional()
                .field("scale", Schema.INT32_SCHEMA).field("value", Schema.BYTES_SCHEMA).build();
    }

    private static Struct variableScale(BigDecimal value)
    {
        return new Struct(variableScaleDecimal()).put("scale", value.scale()).put("value", value.unscaledValue().toByteArray());
    }

    private static Schema point()
    {
        return SchemaBuilder.struct().name("io.debezium.data.geometry.Point").version(1).optional()
                .field("x", Schema.FLOAT64_SCHEMA).field("y", Schema.FLOAT64_SCHEMA).field("wkb", Schema.OPTIONAL_BYTES_SCHEMA).field("srid", Schema.OPTIONAL_INT32_SCHEMA).build();
    }

    private static Schema geometry()
    {
        return SchemaBuilder.struct().name("io.debezium.data.geometry.Geometry").version(1).optional()
                .field("wkb", Schema.BYTES_SCHEMA).field("srid", Schema.OPTIONAL_INT32_SCHEMA).build();
    }

    private static Map<String, String> mapOf(String... keysAndValues)
    {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
