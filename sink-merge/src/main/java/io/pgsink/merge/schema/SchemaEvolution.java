package io.pgsink.merge.schema;

import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.change.SourceAttribute;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;
import org.jetbrains.annotations.Nullable;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.literal;
import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * {@code schema.evolution=add-columns}: the DDL that creates a missing target table from the source
 * schema (primary key from the source key; on Greenplum {@code DISTRIBUTED BY} the key) and adds
 * new source columns to it. Source types come from the adapter ({@link ColumnSchema#typeName()});
 * a column without one cannot be created. A column added with a constant default gets it in the
 * target too ({@link ColumnDefaults}), so that rows that existed before hold it as on the source;
 * a default the records cannot tell from a stand-in ({@link ColumnSchema#hasUnknownDefault()}) is
 * never written: the source catalog says what it is, or, without one, a table with rows stops.
 * Dropped source columns are left in place; a column whose source type changes to one the target
 * column does not have stops the sink.
 */
public final class SchemaEvolution
{
    private SchemaEvolution() {}

    /**
     * Creates the table, and first its schema unless {@code schemaExists}: {@code CREATE SCHEMA IF
     * NOT EXISTS} wants the CREATE privilege on the database even when the schema exists, which a
     * sink user granted only CREATE on its schema lacks.
     */
    public static List<String> createTable(TableId target, TableSchema source, Dialect dialect, boolean schemaExists)
    {
        return createTable(target, source, dialect, schemaExists, ChangeMetadata.NONE, false);
    }

    /**
     * As {@link #createTable(TableId, TableSchema, Dialect, boolean)}, with the metadata columns
     * after the source's; a history table ({@code history}) gets no primary key (see {@link HistoryTables}).
     */
    static List<String> createTable(TableId target, TableSchema source, Dialect dialect, boolean schemaExists,
            ChangeMetadata metadata, boolean history)
    {
        List<String> untyped = new ArrayList<>();
        StringJoiner definitions = new StringJoiner(", ");
        for (ColumnSchema column : source.columns()) {
            if (column.typeName().isEmpty()) {
                untyped.add(column.name());
                continue;
            }
            definitions.add(quote(column.name()) + " " + column.typeName()
                    + ColumnDefaults.expression(column).map(value -> " DEFAULT " + value).orElse("")
                    + (source.keyColumns().contains(column.name()) ? " NOT NULL" : ""));
        }
        if (!untyped.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot create target table " + target + " for "
                    + source.table() + ": the source did not send the type of column(s) " + untyped
                    + " (with Debezium, set column.propagate.source.type=.* on the source connector), so create the "
                    + "table yourself.");
        }
        MetadataColumns.definitions(metadata).forEach(definitions::add);
        if (source.hasKey() && !history) {
            StringJoiner key = new StringJoiner(", ");
            for (String column : source.keyColumns()) {
                key.add(quote(column));
            }
            definitions.add("PRIMARY KEY (" + key + ")");
        }
        String table = "CREATE TABLE IF NOT EXISTS " + Statements.qualified(target) + " (" + definitions + ")"
                + dialect.distribution().distributedBy(source.keyColumns());
        return schemaExists ? List.of(table) : List.of("CREATE SCHEMA IF NOT EXISTS " + quote(target.schema()), table);
    }

    /** Runs the DDL and commits, so that the data transaction that follows starts with the target as planned. */
    static void execute(Connection connection, List<String> statements)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            for (String sql : statements) {
                statement.execute(sql);
            }
        }
        connection.commit();
    }

    /** Whether the target table holds rows, asked only when the answer matters. */
    @FunctionalInterface
    interface RowsCheck
    {
        boolean hasRows()
                throws SQLException;
    }

    /** The columns of {@code source} the target lacks, for a load that copies every row (so no default matters). */
    public static List<String> addColumns(TableSchema source, TargetTable target)
    {
        try {
            return addColumns(source, target, Map.of(), () -> false);
        }
        catch (SQLException e) {
            throw new IllegalStateException("Asked the target without a catalog to ask about", e);
        }
    }

    /**
     * {@code ALTER TABLE ... ADD COLUMN} for each column of {@code source} the target lacks, with
     * what rows that existed before hold in it on the source: the default the adapter sent; else,
     * from the source catalog ({@code catalog}, by name, empty where it cannot be read), the value
     * a default evaluated once gave them ({@link SourceAttribute#missingValue()}, e.g. of
     * {@code now()}), added as the target default and dropped again. A column whose default the
     * source computed row by row ({@code random()}, {@code nextval}, {@code clock_timestamp()})
     * stops the sink when the target holds rows, which would otherwise read NULL.
     */
    static List<String> addColumns(TableSchema source, TargetTable target, Map<String, SourceAttribute> catalog,
            RowsCheck rows)
            throws SQLException
    {
        List<String> statements = new ArrayList<>();
        List<String> untyped = new ArrayList<>();
        List<String> defaults = new ArrayList<>();
        List<String> volatileDefaults = new ArrayList<>();
        List<String> unknownDefaults = new ArrayList<>();
        for (ColumnSchema column : source.columns()) {
            if (target.column(column.name()).isPresent()) {
                continue;
            }
            if (column.typeName().isEmpty()) {
                untyped.add(column.name());
                continue;
            }
            String add = "ALTER TABLE " + Statements.qualified(target.id()) + " ADD COLUMN " + quote(column.name())
                    + " " + column.typeName();
            SourceAttribute attribute = catalog.get(column.name());
            if (attribute != null) {
                // the catalog knows better than change events: Debezium sends a made-up constant for
                // a function default (1970-01-01 for now(), the text CURRENT_USER for current_user)
                boolean constant = ColumnDefaults.isConstant(attribute.defaultExpression());
                if (attribute.missingValue() != null) {
                    // evaluated once when the column was added: every row from before holds this value
                    statements.add(add + " DEFAULT " + literal(attribute.missingValue()) + "::" + column.typeName());
                    if (!constant) {
                        statements.add("ALTER TABLE " + Statements.qualified(target.id()) + " ALTER COLUMN "
                                + quote(column.name()) + " DROP DEFAULT");
                    }
                    continue;
                }
                if (attribute.defaultExpression() == null || (!constant && !rows.hasRows())) {
                    statements.add(add);
                    continue;
                }
                if (!constant) {
                    volatileDefaults.add(column.name() + " (" + column.typeName() + " DEFAULT "
                            + attribute.defaultExpression() + ")");
                    continue;
                }
                if (column.hasUnknownDefault()) {
                    // the records' value may be a stand-in; the catalog's constant is the default
                    statements.add(add + " DEFAULT " + attribute.defaultExpression());
                    continue;
                }
                // a constant default the column had when the table was created: as the adapter sent it
            }
            else if (column.hasUnknownDefault()) {
                // only the records to go by, and they cannot say what rows from before hold
                if (rows.hasRows()) {
                    unknownDefaults.add(column.name() + " (" + column.typeName() + ")");
                }
                else {
                    statements.add(add);
                }
                continue;
            }
            Optional<String> defaultValue = ColumnDefaults.expression(column);
            if (column.defaultValue() != null && defaultValue.isEmpty()) {
                defaults.add(column.name() + " (" + column.typeName() + ")");
                continue;
            }
            // no IF NOT EXISTS: Greenplum 6 (PostgreSQL 9.4) lacks it for columns. The default fills
            // the rows that exist, as it did on the source, where they produced no change events
            statements.add(add + defaultValue.map(value -> " DEFAULT " + value).orElse(""));
        }
        if (!untyped.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot add column(s) " + untyped + " of "
                    + source.table() + " to " + target.id()
                    + ": the source did not send their types (with Debezium, set column.propagate.source.type=.*); add "
                    + "them to the target yourself.");
        }
        if (!defaults.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot add column(s) " + defaults + " of "
                    + source.table() + " to " + target.id()
                    + ": they have a default on the source that pgsink cannot write as a target default, and rows that "
                    + "existed before the column was added hold it there;"
                    + " add the column(s) to the target yourself with the source's default (ALTER TABLE " + target.id()
                    + " ADD COLUMN ... DEFAULT ...) and restart.");
        }
        if (!unknownDefaults.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot add column(s) " + unknownDefaults + " of "
                    + source.table() + " to " + target.id()
                    + ": the records give them a default that may be the stand-in Debezium sends for a default it "
                    + "cannot evaluate (the epoch for now(), the text CURRENT_USER"
                    + " for current_user, the nil UUID for gen_random_uuid()), so what the rows that existed before "
                    + "the column was added hold on the source is unknown;"
                    + " add the column(s) to the target yourself (ALTER TABLE " + target.id()
                    + " ADD COLUMN ...) with the source's default if it is a constant,"
                    + " or filled with the source's values for the existing keys, and restart.");
        }
        if (!volatileDefaults.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Cannot add column(s) " + volatileDefaults + " of "
                    + source.table() + " to " + target.id()
                    + ": their default on the source is computed, not a constant, and was not evaluated once when they "
                    + "were added (a volatile default such as random()"
                    + " or nextval() gives every row its own value), so rows that existed before hold values that no "
                    + "change event carries and the target cannot compute; add the column(s) to the target yourself "
                    + "(ALTER TABLE " + target.id()
                    + " ADD COLUMN ...), fill them with the source's values for the existing keys, and restart.");
        }
        return statements;
    }

    /**
     * The {@code ALTER TABLE} statements that make the target hold {@code current}'s columns where
     * {@code widen} allows ({@code schema.evolution=add-columns-and-widen}): a column whose source
     * type the target column does not hold is changed to it when that loses nothing
     * ({@link TypeWidening}), a NOT NULL the source column no longer has is dropped. Without
     * {@code widen}, or for a change that is not safe, a column whose source type changed since
     * {@code previous} to one the target column does not hold stops the sink. Types unknown on
     * either side are not compared; nor, without {@code previous}, are types the target column
     * does not hold unsafely (the target was made so).
     */
    static List<String> typeChanges(@Nullable TableSchema previous, TableSchema current, TargetTable target,
            boolean widen)
    {
        List<String> statements = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        for (ColumnSchema column : current.columns()) {
            TargetColumn targetColumn = target.column(column.name()).orElse(null);
            if (targetColumn == null) {
                continue;
            }
            String alter = "ALTER TABLE " + Statements.qualified(target.id()) + " ALTER COLUMN " + quote(column.name());
            if (widen && column.optional() && targetColumn.notNull() && !target.primaryKey().contains(column.name())) {
                statements.add(alter + " DROP NOT NULL");
            }
            String after = column.typeName();
            int index = previous == null ? -1 : previous.columnIndex(column.name()).orElse(-1);
            String before = index < 0 ? "" : previous.columns().get(index).typeName();
            boolean changed = !before.isEmpty() && !before.equalsIgnoreCase(after);
            if (after.isEmpty() || (!changed && !widen)) {
                continue;
            }
            TypeWidening.Verdict verdict = TypeWidening.compare(targetColumn, after);
            if (verdict == TypeWidening.Verdict.WIDENS && widen) {
                statements.add(alter + " TYPE " + after);
            }
            else if (verdict != TypeWidening.Verdict.HOLDS && changed) {
                problems.add(column.name() + " changed from " + before + " to " + after + " but is "
                        + targetColumn.declaredType() + " in the target"
                        + (verdict == TypeWidening.Verdict.WIDENS
                                ? " (a safe widening: schema.evolution=add-columns-and-widen applies it)" : ""));
            }
        }
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.SCHEMA_MISMATCH, "Incompatible type change in " + current.table() + ": "
                    + String.join("; ", problems)
                    + ". Change the target column type (ALTER TABLE " + target.id()
                    + " ALTER COLUMN ... TYPE ...) and restart the sink.");
        }
        return statements;
    }

    /**
     * {@code varchar(20)} → {@code varchar}, {@code int4[]} → {@code _int4}: the {@code pg_type.typname} of a
     * declaration.
     */
    public static String baseType(String declaration)
    {
        String type = declaration.toLowerCase(Locale.ROOT).trim();
        boolean array = type.endsWith("[]");
        if (array) {
            type = type.substring(0, type.length() - 2);
        }
        int parenthesis = type.indexOf('(');
        if (parenthesis >= 0) {
            type = type.substring(0, parenthesis);
        }
        return array ? "_" + type : type;
    }
}
