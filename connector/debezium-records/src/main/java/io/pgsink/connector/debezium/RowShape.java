package io.pgsink.connector.debezium;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.change.UnavailableValue;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Struct;
import org.jetbrains.annotations.Nullable;

import java.time.DateTimeException;
import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * How rows of Debezium records become value arrays of one {@link TableSchema}: the columns, and per
 * column the Connect field to read and its {@link ValueConverter}, chosen by
 * {@link ValueConverters}. Envelope images ({@link DebeziumRecordMapper}), records flattened by
 * {@code ExtractNewRecordState} and keys of deletes that carry no row all go through this one
 * class, so a column gets the same Java type whichever way it arrived (keys of equal rows must
 * meet in the buffer).
 *
 * <p>Immutable; built once per table and Connect schema version.
 */
public final class RowShape
{
    private final Schema connectSchema;
    @Nullable
    private final Schema keySchema;
    private final TableSchema schema;
    private final String[] fields;
    private final ValueConverter[] converters;
    /** Per column, the index of its field in {@link #connectSchema}. */
    private final int[] fieldIndexes;

    private RowShape(Schema connectSchema, @Nullable Schema keySchema, TableSchema schema, String[] fields,
            ValueConverter[] converters)
    {
        this.connectSchema = requireNonNull(connectSchema, "connectSchema is null");
        this.keySchema = keySchema;
        this.schema = requireNonNull(schema, "schema is null");
        this.fields = fields;
        this.converters = converters;
        this.fieldIndexes = new int[fields.length];
        for (int i = 0; i < fields.length; i++) {
            Field field = connectSchema.type() == Schema.Type.STRUCT ? connectSchema.field(fields[i]) : null;
            fieldIndexes[i] = field == null ? -1 : field.index();
        }
    }

    /** The schema this shape was built from (identity-compared to reuse the shape). */
    public Schema connectSchema()
    {
        return connectSchema;
    }

    /** The record key schema this shape was built with, if any. */
    @Nullable
    public Schema keySchema()
    {
        return keySchema;
    }

    public TableSchema schema()
    {
        return schema;
    }

    /**
     * The shape of the row images of an envelope ({@code before}/{@code after} of
     * {@code rowSchema}): every field is a column; the key columns are the fields of
     * {@code keySchema} (none without one).
     *
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) naming table, column and position
     */
    public static RowShape envelope(TableId table, Schema rowSchema, @Nullable Schema keySchema,
            UnavailablePlaceholder placeholder, SourcePosition position)
    {
        if (rowSchema.type() != Schema.Type.STRUCT) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Row images of " + table + " at " + position + " are "
                    + rowSchema.type() + ", not structs");
        }
        return create(table, rowSchema, keySchema, rowSchema.fields(), placeholder, position);
    }

    /**
     * The shape of flattened rows of {@code rowSchema}: every field not starting with
     * {@code metadataPrefix} is a column; the key columns are the fields of {@code keySchema}.
     *
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) naming table, column and position
     */
    public static RowShape flattened(TableId table, Schema rowSchema, @Nullable Schema keySchema, String metadataPrefix,
            UnavailablePlaceholder placeholder, SourcePosition position)
    {
        if (rowSchema.type() != Schema.Type.STRUCT) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Records of " + table + " at " + position + " are "
                    + rowSchema.type() + ", not structs of the row's columns");
        }
        List<Field> columnFields = new ArrayList<>();
        for (Field field : rowSchema.fields()) {
            if (!field.name().startsWith(metadataPrefix)) {
                columnFields.add(field);
            }
        }
        return create(table, rowSchema, keySchema, columnFields, placeholder, position);
    }

    /**
     * The shape of an existing {@link TableSchema} whose rows Debezium describes with
     * {@code rowSchema} (an envelope's {@code after}): for the key of a tombstone of that table.
     */
    public static RowShape of(TableSchema schema, Schema rowSchema, @Nullable Schema keySchema,
            UnavailablePlaceholder placeholder, SourcePosition position)
    {
        String[] fields = new String[schema.columnCount()];
        ValueConverter[] converters = new ValueConverter[schema.columnCount()];
        for (int i = 0; i < fields.length; i++) {
            String name = schema.columns().get(i).name();
            Field field = rowSchema.field(name);
            if (field == null) {
                throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Column " + name + " of " + schema.table()
                        + " is not a field of its records' schema (at " + position + ")");
            }
            fields[i] = name;
            converters[i] = converter(schema.table(), field, placeholder, position);
        }
        return new RowShape(rowSchema, keySchema, schema, fields, converters);
    }

    private static RowShape create(TableId table, Schema connectSchema, @Nullable Schema keySchema,
            List<Field> columnFields, UnavailablePlaceholder placeholder, SourcePosition position)
    {
        List<ColumnSchema> columns = new ArrayList<>(columnFields.size());
        String[] fields = new String[columnFields.size()];
        ValueConverter[] converters = new ValueConverter[columnFields.size()];
        for (int i = 0; i < columnFields.size(); i++) {
            Field field = columnFields.get(i);
            fields[i] = field.name();
            converters[i] = converter(table, field, placeholder, position);
            String type = SourceTypes.declaration(field.schema());
            columns.add(new ColumnSchema(field.name(), type, field.schema().isOptional(),
                    defaultValue(field, type, converters[i])));
        }
        List<String> keyColumns = new ArrayList<>();
        if (keySchema != null) {
            if (keySchema.type() != Schema.Type.STRUCT) {
                throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record keys of " + table + " at " + position
                        + " are " + keySchema.type() + ", not structs of the key columns");
            }
            for (Field field : keySchema.fields()) {
                keyColumns.add(field.name());
            }
        }
        try {
            return new RowShape(connectSchema, keySchema, new TableSchema(table, columns, keyColumns), fields,
                    converters);
        }
        catch (IllegalArgumentException e) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Records of " + table + " at " + position
                    + " do not describe a table: " + e.getMessage(), e);
        }
    }

    /** The shape of a table known only from its record keys: the key columns are all its columns. */
    public static RowShape keyOnly(TableId table, Schema keySchema, UnavailablePlaceholder placeholder,
            SourcePosition position)
    {
        if (keySchema.type() != Schema.Type.STRUCT) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Record keys of " + table + " at " + position + " are "
                    + keySchema.type() + ", not structs of the key columns");
        }
        return create(table, keySchema, keySchema, keySchema.fields(), placeholder, position);
    }

    /**
     * The column's default as Debezium describes it, converted like the column's values; null when
     * there is none or it cannot be converted; {@link ColumnSchema.UnknownDefault} when it may be
     * the stand-in Debezium sends for a default it cannot evaluate ({@link MadeUpDefaults}).
     */
    @Nullable
    private static Object defaultValue(Field field, String type, ValueConverter converter)
    {
        Object value = field.schema().defaultValue();
        if (value == null) {
            return null;
        }
        try {
            Object converted = converter.convert(value);
            if (converted == UnavailableValue.INSTANCE || converted == null) {
                return null;
            }
            return MadeUpDefaults.mayBeMadeUp(type, converted) ? ColumnSchema.UnknownDefault.INSTANCE : converted;
        }
        catch (RuntimeException e) {
            return null;
        }
    }

    private static ValueConverter converter(TableId table, Field field, UnavailablePlaceholder placeholder,
            SourcePosition position)
    {
        try {
            return ValueConverters.forSchema(field.schema(), SourceTypes.propagatedName(field.schema()), placeholder);
        }
        catch (IllegalArgumentException e) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Column " + field.name() + " of " + table + " (at "
                    + position + ") cannot be written: " + e.getMessage(), e);
        }
    }

    /**
     * This shape, for records that describe the same rows with other (equal) schema objects:
     * remembered, the next check is by identity again.
     */
    public RowShape withSchemas(Schema connectSchema, @Nullable Schema keySchema)
    {
        return new RowShape(connectSchema, keySchema, schema, fields, converters);
    }

    /** Whether this shape's key columns are exactly the fields of {@code key}, in order. */
    public boolean hasKeyOf(Schema key)
    {
        List<String> keyColumns = schema.keyColumns();
        List<Field> keyFields = key.fields();
        if (keyColumns.size() != keyFields.size()) {
            return false;
        }
        for (int i = 0; i < keyFields.size(); i++) {
            if (!keyColumns.get(i).equals(keyFields.get(i).name())) {
                return false;
            }
        }
        return true;
    }

    /** The values of {@code row} in column order. */
    public Object[] row(Struct row, @Nullable Struct key, SourcePosition position)
    {
        Object[] values = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            // never Struct.get: it returns the column's default value in place of a NULL
            values[i] = convert(i, row.getWithoutDefault(fields[i]), key, position);
        }
        return values;
    }

    /**
     * The values of a row in column order, from its fields' values as Connect would hold them in a
     * struct of {@link #connectSchema()}, indexed as its fields (a row read without building the
     * struct); the same as {@link #row(Struct, Struct, SourcePosition)} of that struct.
     */
    public Object[] row(Object[] fieldValues, @Nullable Struct key, SourcePosition position)
    {
        Object[] values = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            if (fieldIndexes[i] < 0) {
                throw new IllegalStateException("column " + fields[i] + " is not a field of the shape's schema");
            }
            values[i] = convert(i, fieldValues[fieldIndexes[i]], key, position);
        }
        return values;
    }

    /** A row image holding only the key columns, from the record key; the other columns are NULL. */
    public Object[] keyRow(Struct key, SourcePosition position)
    {
        Object[] values = new Object[fields.length];
        for (int i = 0; i < schema.keyColumnCount(); i++) {
            int index = schema.keyIndex(i);
            values[index] = convert(index, key.getWithoutDefault(schema.keyColumns().get(i)), key, position);
        }
        return values;
    }

    @Nullable
    private Object convert(int column, @Nullable Object value, @Nullable Struct key, SourcePosition position)
    {
        if (value == null) {
            return null;
        }
        try {
            return converters[column].convert(value);
        }
        catch (IllegalArgumentException | DateTimeException | ClassCastException | ArithmeticException e) {
            throw new SinkException(ErrorCode.DATA, "Cannot convert column " + fields[column] + " of " + schema.table()
                    + " key " + describeKey(key)
                    + " at " + position + ": " + e.getMessage(), e);
        }
    }

    private static String describeKey(@Nullable Struct key)
    {
        if (key == null) {
            return "(none)";
        }
        List<String> parts = new ArrayList<>();
        for (Field field : key.schema().fields()) {
            parts.add(String.valueOf(key.getWithoutDefault(field.name())));
        }
        return "(" + String.join(", ", parts) + ")";
    }
}
