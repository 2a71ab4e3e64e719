package io.pgsink.connector.debezium;

import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.Operation;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.jetbrains.annotations.Nullable;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * Maps Debezium change records, written against Kafka Connect's data API, to pgsink
 * {@link ChangeEvent}s. The same mapper serves the standalone service (Debezium embedded engine,
 * {@code SourceRecord}s) and the Kafka Connect sink ({@code SinkRecord}s); the caller supplies the
 * record's {@link SourcePosition}, since only it knows how positions are stored.
 *
 * <p>Records are Debezium envelopes: {@code before}, {@code after}, {@code op}, {@code source},
 * {@code ts_ms}. {@code op} {@code c} is an insert, {@code r} a snapshot read, {@code u} an update,
 * {@code d} a delete, {@code t} a truncate; {@code m} (a logical decoding message), heartbeats,
 * transaction markers and tombstones (null values, which follow deletes) change no row and map to
 * nothing. The table is {@code source.schema}/{@code source.table}; the primary-key columns are the
 * fields of the record key's schema, in order (none for a table without a key); the commit time is
 * {@code source.ts_ms}. Records flattened by {@code ExtractNewRecordState} are refused here: the Kafka
 * Connect sink reads them, with the same {@link RowShape}s.
 *
 * <p>One {@link RowShape} (the {@link TableSchema} and a {@link ValueConverter} per column) is built
 * per table and Connect schema version and shared by its events (Debezium hands out the same schema object until
 * the table changes, so the check is an identity comparison).
 *
 * <p>Not thread-safe: one mapper per task or engine thread.
 */
public final class DebeziumRecordMapper
{
    private static final String HEARTBEAT = "io.debezium.connector.common.Heartbeat";
    private static final String TRANSACTION_METADATA = "io.debezium.connector.common.TransactionMetadataValue";

    private final UnavailablePlaceholder placeholder;
    private final KeyChanges keyChanges;
    private final Map<TableId, RowShape> shapes = new HashMap<>();

    /** What the create half of a key change ({@link KeyChangeHeaders}) becomes. */
    public enum KeyChanges
    {
        /**
         * An insert of the new key whose unchanged TOAST values come from the old key's row
         * ({@link ChangeEvent#insertMovedFrom}); the delete half deletes the old key in its own
         * place of the stream. Right for a stream in which the two may come in either order or be
         * applied in different flushes, as long as the old row is still there when the create is.
         */
        INSERT_FILLED_FROM_OLD_KEY,
        /**
         * An update from the old key (read from the header) to the new one, which deletes the old
         * key's row and fills the new row's unchanged TOAST values from it, in whichever batch the
         * create arrives; the caller then ignores the delete half. Only for a stream in which the
         * create follows its delete with nothing of the old key in between (one ordered source).
         */
        UPDATE_FROM_OLD_KEY,
    }

    public DebeziumRecordMapper(UnavailablePlaceholder placeholder, KeyChanges keyChanges)
    {
        this.placeholder = requireNonNull(placeholder, "placeholder is null");
        this.keyChanges = requireNonNull(keyChanges, "keyChanges is null");
    }

    public DebeziumRecordMapper(UnavailablePlaceholder placeholder)
    {
        this(placeholder, KeyChanges.INSERT_FILLED_FROM_OLD_KEY);
    }

    public DebeziumRecordMapper()
    {
        this(new UnavailablePlaceholder(UnavailablePlaceholder.DEFAULT));
    }

    /**
     * Maps one record.
     *
     * @param position where the record is in the source, stored with the data when it is applied
     * @return the event, or empty when the record changes no row
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) for a record that is not a Debezium
     *         change event or has a column pgsink cannot write; ({@link ErrorCode#DATA}) for a value
     *         that cannot be converted; both name topic, table, key, column and position
     */
    public Optional<ChangeEvent> map(ConnectRecord<?> record, SourcePosition position)
    {
        requireNonNull(record, "record is null");
        requireNonNull(position, "position is null");
        Object value = record.value();
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof Struct envelope)) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record of topic " + record.topic() + " at " + position
                    + " is not a Debezium change event: its value is a " + value.getClass().getName());
        }
        Schema envelopeSchema = envelope.schema();
        if (envelopeSchema.field("op") == null) {
            String name = envelopeSchema.name();
            if (name != null
                    && (name.equals(HEARTBEAT) || name.equals(TRANSACTION_METADATA)
                            || name.endsWith(".SchemaChangeValue"))) {
                return Optional.empty();
            }
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record of topic " + record.topic() + " at " + position
                    + " is not a Debezium change event envelope (no op field"
                    + (name == null ? "" : ", schema " + name) + "); records flattened by ExtractNewRecordState are "
                    + "not supported by this mapper");
        }
        String op = envelope.getString("op");
        if (op == null || op.equals("m")) {
            return Optional.empty();
        }
        Struct source = envelope.getStruct("source");
        if (source == null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Change event of topic " + record.topic() + " at "
                    + position + " has no source block, so its table is unknown");
        }
        TableId table = TableId.of(source.getString("schema"), source.getString("table"));
        long sourceTime = sourceTime(source, envelope);
        switch (op) {
            case "t" -> {
                return Optional.of(ChangeEvent.truncate(table, position, sourceTime));
            }
            case "c", "r", "u", "d" -> {
                // fall through to the row operations below
            }
            default -> throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Change event of " + table + " at " + position
                    + " has unknown op '" + op + "'");
        }
        Field rowField = envelopeSchema.field(op.equals("d") ? "before" : "after");
        if (rowField == null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Change event of " + table + " at " + position
                    + " has no " + (op.equals("d") ? "before" : "after") + " field");
        }
        Struct key = record.key() instanceof Struct struct ? struct : null;
        RowShape shape = shape(table, rowField.schema(), key == null ? null : key.schema(), position);
        Struct before = envelope.getStruct("before");
        Struct after = envelope.getStruct("after");
        switch (op) {
            case "c" -> {
                Object[] row = shape.row(required(after, "after", table, position), key, position);
                Struct oldKey = KeyChangeHeaders.oldKey(record);
                if (oldKey != null && shape.hasKeyOf(oldKey.schema())) {
                    Object[] oldKeyRow = shape.keyRow(oldKey, position);
                    return Optional.of(keyChanges == KeyChanges.UPDATE_FROM_OLD_KEY
                            ? ChangeEvent.update(shape.schema(), oldKeyRow, row, position, sourceTime)
                            : ChangeEvent.insertMovedFrom(shape.schema(), oldKeyRow, row, position, sourceTime));
                }
                return Optional.of(ChangeEvent.insert(shape.schema(), Operation.INSERT, row, position, sourceTime));
            }
            case "r" -> {
                return Optional.of(ChangeEvent.insert(shape.schema(), Operation.READ,
                        shape.row(required(after, "after", table, position), key, position), position, sourceTime));
            }
            case "u" -> {
                Object[] beforeRow = before == null ? null : shape.row(before, key, position);
                return Optional.of(ChangeEvent.update(shape.schema(), beforeRow,
                        shape.row(required(after, "after", table, position), key, position), position, sourceTime));
            }
            case "d" -> {
                Object[] beforeRow = before != null ? shape.row(before, key, position)
                        : keyRow(shape, key, table, position);
                return Optional.of(ChangeEvent.delete(shape.schema(), beforeRow, position, sourceTime));
            }
            default -> throw new IllegalStateException("op " + op);
        }
    }

    private static long sourceTime(Struct source, Struct envelope)
    {
        Object sourceMillis = source.schema().field("ts_ms") == null ? null : source.get("ts_ms");
        if (sourceMillis instanceof Number number) {
            return number.longValue();
        }
        Object eventMillis = envelope.schema().field("ts_ms") == null ? null : envelope.get("ts_ms");
        return eventMillis instanceof Number number ? number.longValue() : 0;
    }

    private static Struct required(@Nullable Struct row, String name, TableId table, SourcePosition position)
    {
        if (row == null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Change event of " + table + " at " + position
                    + " has no " + name + " image");
        }
        return row;
    }

    /**
     * The shape of {@code table}'s row images of {@code rowSchema} and keys of {@code keySchema}, as
     * {@link #map} uses it (one per table and schema version): for a caller that reads the images
     * of an envelope without building its structs.
     *
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) naming table, column and position
     */
    public RowShape shape(TableId table, Schema rowSchema, @Nullable Schema keySchema, SourcePosition position)
    {
        RowShape shape = shapes.get(table);
        if (shape != null && shape.connectSchema() == rowSchema && shape.keySchema() == keySchema) {
            return shape;
        }
        if (shape != null && shape.connectSchema().equals(rowSchema) && Objects.equals(shape.keySchema(), keySchema)) {
            // an equal schema object from another record: remember it so the next check is by identity
            shape = shape.withSchemas(rowSchema, keySchema);
        }
        else {
            shape = RowShape.envelope(table, rowSchema, keySchema, placeholder, position);
        }
        shapes.put(table, shape);
        return shape;
    }

    /** The image of a delete that came without one: the key columns from the record key, the rest NULL. */
    private static Object[] keyRow(RowShape shape, @Nullable Struct key, TableId table, SourcePosition position)
    {
        if (key == null) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Delete of " + table + " at " + position
                    + " has neither a before image nor a key");
        }
        return shape.keyRow(key, position);
    }
}
