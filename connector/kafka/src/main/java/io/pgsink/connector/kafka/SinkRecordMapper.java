package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.DebeziumRecordMapper;
import io.pgsink.connector.debezium.KeyChangeHeaders;
import io.pgsink.connector.debezium.RowShape;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.connector.kafka.json.EnvelopeImages;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.TableNameFormat;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.SinkRecord;
import org.jetbrains.annotations.Nullable;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * Maps the records a Kafka Connect sink task receives to {@link ChangeEvent}s of their target
 * tables ({@link TableNameFormat}):
 * <ul>
 * <li><b>Debezium envelopes</b> ({@code before}, {@code after}, {@code op}, {@code source}; op
 *     {@code t} truncates) and Debezium's heartbeats, transaction and schema-change records: by the
 *     {@link DebeziumRecordMapper} the standalone service uses, then routed.</li>
 * <li><b>Records flattened by {@code ExtractNewRecordState}</b>: the row is the value's fields
 *     without the metadata ones (those starting with {@code flattened.metadata.prefix}, default
 *     {@code __}); {@code __deleted=true} (delete handling {@code rewrite}) or {@code __op=d} make
 *     it a delete, {@code __op} {@code c}/{@code r} an insert or snapshot read, anything else an
 *     upsert. A record with a value schema but no value (delete handling {@code tombstone}, the
 *     SMT's default) deletes its key. {@code __source_schema}/{@code __source_table} (fields or
 *     headers, from {@code add.fields}/{@code add.headers=source.schema,source.table}) name the
 *     source table.</li>
 * <li><b>Tombstones</b> (neither value nor value schema): with {@code delete.on.tombstone=true}
 *     they delete their key, otherwise they change nothing (Debezium writes one after each delete
 *     event, which already deleted the row).</li>
 * </ul>
 * Primary-key columns are the fields of the record key, in order. Values of every column go
 * through the same {@link RowShape}s in every case.
 *
 * <p>Not thread-safe: one per task.
 */
final class SinkRecordMapper
{
    private static final String HEARTBEAT = "io.debezium.connector.common.Heartbeat";
    private static final String TRANSACTION_METADATA = "io.debezium.connector.common.TransactionMetadataValue";
    private static final int MAX_CACHED_SCHEMAS = 10_000;

    private final DebeziumRecordMapper envelopes;
    private final TableNameFormat routing;
    private final boolean deleteOnTombstone;
    private final UnavailablePlaceholder placeholder;
    private final String metadataPrefix;
    private final String deletedField;
    private final String operationField;
    private final String sourceSchemaField;
    private final String sourceTableField;
    private final String sourceTimeField;
    /** Routed schemas of envelope events, by the mapper's (source-named) schema. */
    private final Map<TableSchema, TableSchema> routedSchemas = new IdentityHashMap<>();
    /** The latest row shape per target table, for flattened records and the keys of tombstones. */
    private final Map<TableId, RowShape> shapes = new HashMap<>();
    /** Shapes of tables known only by their keys (a tombstone came first), by target table. */
    private final Map<TableId, RowShape> keyShapes = new HashMap<>();
    /** Whether the column selection ({@code column.*}) needs the source table of flattened records and tombstones. */
    private final boolean selectsColumns;
    /**
     * The source table each target table's latest record taken named, for the column selection
     * ({@link #sourceTableOf}); written by {@link #noteSource} on the task's thread, when the record's
     * event is taken, not when it is read (which may be ahead, on the reading thread).
     */
    private final Map<TableId, TableId> sourceTables = new HashMap<>();
    /** The target and source table the last {@link #map} routed, when the column selection needs them. */
    @Nullable
    private TableId routedTarget;
    @Nullable
    private TableId routedSource;

    SinkRecordMapper(KafkaSinkConfig config)
    {
        requireNonNull(config, "config is null");
        this.placeholder = config.placeholder();
        this.envelopes = new DebeziumRecordMapper(placeholder);
        this.routing = config.routing();
        this.deleteOnTombstone = config.deleteOnTombstone();
        this.metadataPrefix = config.metadataPrefix();
        this.deletedField = metadataPrefix + "deleted";
        this.operationField = metadataPrefix + "op";
        this.sourceSchemaField = metadataPrefix + "source_schema";
        this.sourceTableField = metadataPrefix + "source_table";
        this.sourceTimeField = metadataPrefix + "source_ts_ms";
        this.selectsColumns = !config.sink().columnSelection().isEmpty();
    }

    /**
     * The source table the latest record routed to {@code target} named (the envelope's
     * {@code source} block, or a flattened record's source fields), which the column selection's
     * entries are matched against; {@code target} itself when no record named one.
     */
    TableId sourceTableOf(TableId target)
    {
        return sourceTables.getOrDefault(target, target);
    }

    /** The record that routed {@code target} from {@code source} was taken (task's thread). */
    void noteSource(TableId target, TableId source)
    {
        sourceTables.put(target, source);
    }

    /** The target table the last {@link #map} routed from a named source table; null when none or not needed. */
    @Nullable
    TableId routedTarget()
    {
        return routedTarget;
    }

    /** The source table of {@link #routedTarget}. */
    @Nullable
    TableId routedSource()
    {
        return routedSource;
    }

    private TableId routed(String topic, @Nullable TableId source, SourcePosition position)
    {
        TableId target = target(topic, source, position);
        if (source != null && selectsColumns) {
            routedTarget = target;
            routedSource = source;
        }
        return target;
    }

    /**
     * Maps one record.
     *
     * @param position the record's position, stored with the data when it is applied
     * @return the event, or empty when the record changes no row
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH} or {@link ErrorCode#DATA}) for a
     *         record that cannot be applied, naming topic, position, table, key and column
     */
    Optional<ChangeEvent> map(SinkRecord record, SourcePosition position)
    {
        routedTarget = null;
        routedSource = null;
        Object value = record.value();
        if (value == null) {
            return tombstone(record, position);
        }
        if (!(value instanceof Struct struct)) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record of topic " + record.topic() + " at " + position
                    + " is not a Debezium change event: its value is a "
                    + value.getClass().getName() + ", not a struct (use a converter that keeps schemas, e.g. "
                    + "JsonConverter with schemas.enable=true, or Avro)");
        }
        if (isEnvelope(struct.schema())) {
            Optional<ChangeEvent> event = envelopes.map(record, position);
            if (event.isEmpty()) {
                return event;
            }
            return Optional.of(route(record, event.get()));
        }
        return Optional.of(flattened(record, struct, position));
    }

    /** Debezium's change event envelopes and the other records only its mapper knows. */
    private static boolean isEnvelope(Schema schema)
    {
        if (schema.field("op") != null && schema.field("source") != null) {
            return true;
        }
        String name = schema.name();
        return name != null
                && (name.equals(HEARTBEAT) || name.equals(TRANSACTION_METADATA) || name.endsWith(".SchemaChangeValue"));
    }

    /**
     * Maps a Debezium change event read without its value's structs ({@link EnvelopeImages}) to
     * what {@link #map} makes of the same record as structs: the same row shapes, events and
     * routing; null for what only the struct path takes (a truncate, a message, a key change's
     * create, a delete without its before image, an image missing), which the caller then maps so.
     *
     * @param valueSchema the record's value schema, of which {@code images} were read
     * @param key the record's key as the struct path reads it
     */
    @Nullable
    ChangeEvent mapImages(SinkRecord record, Schema valueSchema, SchemaAndValue key, EnvelopeImages images,
            SourcePosition position)
    {
        routedTarget = null;
        routedSource = null;
        String op = images.op();
        boolean delete = op.equals("d");
        boolean known = delete || op.equals("c") || op.equals("r") || op.equals("u");
        if (!known || op.equals("c") && record.headers().lastWithName(KeyChangeHeaders.OLD_KEY) != null) {
            return null;
        }
        Object[] image = delete ? images.before() : images.after();
        if (image == null) {
            return null;
        }
        Struct keyStruct = key.value() instanceof Struct struct ? struct : null;
        TableId table = TableId.of(images.sourceSchema(), images.sourceTable());
        RowShape shape = envelopes.shape(table, delete ? images.beforeSchema() : images.afterSchema(),
                keyStruct == null ? null : keyStruct.schema(), position);
        // an update's before image first, as the struct path reads them
        Object[] before = op.equals("u") && images.before() != null ? shape.row(images.before(), keyStruct, position)
                : null;
        Object[] row = shape.row(image, keyStruct, position);
        long sourceTime = images.sourceMillis();
        ChangeEvent event = switch (op) {
            case "c" -> ChangeEvent.insert(shape.schema(), Operation.INSERT, row, position, sourceTime);
            case "r" -> ChangeEvent.insert(shape.schema(), Operation.READ, row, position, sourceTime);
            case "u" -> ChangeEvent.update(shape.schema(), before, row, position, sourceTime);
            default -> ChangeEvent.delete(shape.schema(), row, position, sourceTime);
        };
        return route(record.topic(), valueSchema, key.schema(), event);
    }

    private ChangeEvent route(SinkRecord record, ChangeEvent event)
    {
        return route(record.topic(), record.valueSchema(), record.keySchema(), event);
    }

    private ChangeEvent route(String topic, Schema valueSchema, @Nullable Schema keySchema, ChangeEvent event)
    {
        TableId target = routed(topic, event.table(), event.position());
        if (event.operation() == Operation.TRUNCATE) {
            return target.equals(event.table()) ? event
                    : ChangeEvent.truncate(target, event.position(), event.sourceTimeMillis());
        }
        TableSchema source = event.schema();
        TableSchema routed = routedSchemas.get(source);
        if (routed == null || !routed.table().equals(target)) {
            routed = target.equals(source.table()) ? source
                    : new TableSchema(target, source.columns(), source.keyColumns());
            if (routedSchemas.size() >= MAX_CACHED_SCHEMAS) {
                routedSchemas.clear();
            }
            routedSchemas.put(source, routed);
        }
        remember(routed, valueSchema, keySchema, event.position());
        if (routed == source) {
            return event;
        }
        switch (event.operation()) {
            case INSERT, READ -> {
                return event.before() != null
                        ? ChangeEvent.insertMovedFrom(routed, event.before(), event.after(), event.position(),
                                event.sourceTimeMillis())
                        : ChangeEvent.insert(routed, event.operation(), event.after(), event.position(),
                                event.sourceTimeMillis());
            }
            case UPDATE -> {
                return ChangeEvent.update(routed, event.before(), event.after(), event.position(),
                        event.sourceTimeMillis());
            }
            case DELETE -> {
                return ChangeEvent.delete(routed, event.before(), event.position(), event.sourceTimeMillis());
            }
            case TRUNCATE -> throw new IllegalStateException("handled above");
        }
        throw new IllegalStateException("unknown operation " + event.operation());
    }

    /** Keeps the shape of an envelope-fed table, so that a later tombstone of it can be read. */
    private void remember(TableSchema routed, Schema valueSchema, @Nullable Schema keySchema, SourcePosition position)
    {
        RowShape known = shapes.get(routed.table());
        if (known != null && known.schema() == routed) {
            return;
        }
        Field after = valueSchema.field("after");
        if (after == null) {
            return;
        }
        shapes.put(routed.table(), RowShape.of(routed, after.schema(), keySchema, placeholder, position));
    }

    private ChangeEvent flattened(SinkRecord record, Struct value, SourcePosition position)
    {
        TableId target = routed(record.topic(), sourceTable(record, value, position), position);
        Struct key = key(record, position);
        RowShape shape = flattenedShape(target, value.schema(), key == null ? null : key.schema(), position);
        Object[] row = shape.row(value, key, position);
        long sourceTime = sourceTime(record, value);
        if ("true".equals(text(record, value, deletedField))) {
            return ChangeEvent.delete(shape.schema(), row, position, sourceTime);
        }
        Struct oldKey = KeyChangeHeaders.oldKey(record);
        if (oldKey != null && shape.hasKeyOf(oldKey.schema())) {
            // the create of a key change (ExtractNewRecordState keeps the headers): see DebeziumRecordMapper.KeyChanges
            return ChangeEvent.insertMovedFrom(shape.schema(), shape.keyRow(oldKey, position), row, position,
                    sourceTime);
        }
        String operation = text(record, value, operationField);
        if (operation == null) {
            return ChangeEvent.update(shape.schema(), null, row, position, sourceTime);
        }
        switch (operation) {
            case "c" -> {
                return ChangeEvent.insert(shape.schema(), Operation.INSERT, row, position, sourceTime);
            }
            case "r" -> {
                return ChangeEvent.insert(shape.schema(), Operation.READ, row, position, sourceTime);
            }
            case "u" -> {
                return ChangeEvent.update(shape.schema(), null, row, position, sourceTime);
            }
            case "d" -> {
                return ChangeEvent.delete(shape.schema(), row, position, sourceTime);
            }
            default -> throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Flattened record of " + target + " at "
                    + position + " has unknown " + operationField + " '" + operation + "'");
        }
    }

    /** A record without a value: a flattened delete (it has the row's schema) or a tombstone. */
    private Optional<ChangeEvent> tombstone(SinkRecord record, SourcePosition position)
    {
        Schema valueSchema = record.valueSchema();
        boolean flattenedDelete = valueSchema != null && valueSchema.type() == Schema.Type.STRUCT;
        if (!flattenedDelete && !deleteOnTombstone) {
            return Optional.empty();
        }
        Struct key = key(record, position);
        if (key == null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, (flattenedDelete ? "Flattened delete" : "Tombstone")
                    + " of topic " + record.topic() + " at " + position
                    + " has no key, so there is no row to delete");
        }
        TableId target = routed(record.topic(), sourceTable(record, null, position), position);
        long sourceTime = sourceTime(record, null);
        RowShape shape;
        if (flattenedDelete) {
            shape = flattenedShape(target, valueSchema, key.schema(), position);
        }
        else {
            shape = shapes.get(target);
            if (shape == null || !shape.hasKeyOf(key.schema())) {
                shape = keyShapes.get(target);
                if (shape == null || shape.connectSchema() != key.schema()) {
                    shape = RowShape.keyOnly(target, key.schema(), placeholder, position);
                    keyShapes.put(target, shape);
                }
            }
        }
        return Optional.of(ChangeEvent.delete(shape.schema(), shape.keyRow(key, position), position, sourceTime));
    }

    private RowShape flattenedShape(TableId target, Schema rowSchema, @Nullable Schema keySchema,
            SourcePosition position)
    {
        RowShape shape = shapes.get(target);
        if (shape != null && shape.connectSchema() == rowSchema && shape.keySchema() == keySchema) {
            return shape;
        }
        RowShape created = RowShape.flattened(target, rowSchema, keySchema, metadataPrefix, placeholder, position);
        if (shape != null && shape.schema().equals(created.schema())) {
            // the same table shape from another schema object (a delete's schema has no added fields):
            // keep one TableSchema instance per table, so the buffer compares versions by identity
            created = RowShape.of(shape.schema(), rowSchema, keySchema, placeholder, position);
        }
        shapes.put(target, created);
        return created;
    }

    private TableId target(String topic, @Nullable TableId source, SourcePosition position)
    {
        try {
            return routing.route(topic, source);
        }
        catch (IllegalArgumentException e) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot route the record of topic " + topic + " at "
                    + position + " (from " + source + ") with target.table.name.format "
                    + routing + ": " + e.getMessage(), e);
        }
    }

    /** The source table a flattened record or a tombstone names, when the routing needs it. */
    @Nullable
    private TableId sourceTable(SinkRecord record, @Nullable Struct value, SourcePosition position)
    {
        if (!routing.needsSourceTable() && !selectsColumns) {
            return null;
        }
        String schema = text(record, value, sourceSchemaField);
        String table = text(record, value, sourceTableField);
        boolean named = schema != null && table != null && !schema.isEmpty() && !table.isEmpty();
        if (!named && !routing.needsSourceTable()) {
            // only the column selection asks: it matches the target table then
            return null;
        }
        if (!named) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record of topic " + record.topic() + " at " + position
                    + " does not name its source table, which target.table.name.format "
                    + routing + " needs: flattened records and tombstones name it only in " + sourceSchemaField
                    + " and " + sourceTableField
                    + " (ExtractNewRecordState with add.fields=source.schema,source.table, or add.headers for "
                    + "deletes); or route by ${topic}");
        }
        return TableId.of(schema, table);
    }

    @Nullable
    private static Struct key(SinkRecord record, SourcePosition position)
    {
        Object key = record.key();
        if (key == null) {
            return null;
        }
        if (key instanceof Struct struct) {
            return struct;
        }
        throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record of topic " + record.topic() + " at " + position
                + " has a key of type " + key.getClass().getName()
                + ", not a struct of the key columns (use a key converter that keeps schemas, e.g. JsonConverter with "
                + "schemas.enable=true)");
    }

    private long sourceTime(SinkRecord record, @Nullable Struct value)
    {
        String text = text(record, value, sourceTimeField);
        if (text != null) {
            try {
                return Long.parseLong(text);
            }
            catch (NumberFormatException e) {
                // not a time: fall back to the record's
            }
        }
        Long timestamp = record.timestamp();
        return timestamp == null ? 0 : timestamp;
    }

    /** A metadata field of a flattened record, or else the header of that name, as text. */
    @Nullable
    private static String text(SinkRecord record, @Nullable Struct value, String name)
    {
        if (value != null && value.schema().field(name) != null) {
            Object field = value.getWithoutDefault(name);
            if (field != null) {
                return field.toString();
            }
        }
        Header header = record.headers().lastWithName(name);
        if (header == null || header.value() == null) {
            return null;
        }
        // header.converter=ByteArrayConverter hands over the text SimpleHeaderConverter wrote as its bytes
        return header.value() instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8)
                : header.value().toString();
    }
}
