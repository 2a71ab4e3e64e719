package io.pgsink.merge.plan;

import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.StagingColumns;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.List;
import java.util.Set;
import java.util.StringJoiner;
import java.util.regex.Pattern;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * The statements of one table's small batches ({@code SmallBatchWriter}), made once per
 * {@link TablePlan}: the staging table's statements, with the staging table replaced by a
 * {@code WITH} query over {@code unnest} of arrays bound as parameters, one per column. A column of
 * a built-in scalar type that is not text ({@link #bindsTyped}) is bound as an array literal of its
 * type, which the server reads with the type's input function, as COPY reads text; any other
 * column as a text array whose elements are cast to the column's type (an I/O conversion through
 * the same input function).
 *
 * @param merge the {@code MERGE} (PostgreSQL 15+): parameters are the insert flags, then one array per column.
 *         Unlike the staging table's, it does not turn hash and merge joins off: the planner knows
 *         how many rows {@code unnest} returns and probes the key index for a few hundred of them
 *         by itself, and the two {@code SET LOCAL}s would cost the server more than the typed
 *         arrays save
 * @param deleteKeys the delete of touched keys: one array per primary-key column (target key order)
 * @param insertRows the insert of final rows: the insert flags, then one array per column
 * @param deleteAndInsert {@code deleteKeys} and {@code insertRows}, sent together: their parameters in that order
 * @param typedColumns per column, whether the statements read it as an array literal of its type ({@link #bindsTyped})
 * @param typedKeys the same per primary-key column, in target key order
 */
public record SmallBatchSql(String merge, String deleteKeys, String insertRows, String deleteAndInsert,
        List<Boolean> typedColumns, List<Boolean> typedKeys)
{
    /** For plans that never take the small path (append-only and history tables). */
    static final SmallBatchSql NONE = new SmallBatchSql("", "", "", "", List.of(), List.of());

    private static final String ROWS = "__pgsink_rows";
    private static final String KEYS = "__pgsink_keys";
    /**
     * Types whose values are bound as an array literal of the type itself ({@code ?::bigint[]}),
     * so that the server parses each value once with the type's input function instead of making a
     * text value and then converting it: built-in scalar types, not text (a text array travels in
     * binary and needs no conversion), whose array literals separate elements with commas (not
     * {@code box}) and whose names, without modifier, are a type ({@code interval year to month} is
     * not).
     */
    private static final Set<String> TYPED = Set.of("smallint", "integer", "bigint", "numeric", "real",
            "double precision", "boolean", "date", "timestamp without time zone", "timestamp with time zone",
            "time without time zone", "uuid", "jsonb", "json", "bytea");
    /** A type modifier as {@code format_type} prints it: {@code (20)}, {@code (12,2)}. */
    private static final Pattern TYPE_MODIFIER = Pattern.compile("\\(\\d+(,\\d+)?\\)");

    public static SmallBatchSql create(Dialect dialect, TargetTable target, List<TargetColumn> columns,
            String deleteAction)
    {
        String rows = "WITH " + rows(columns) + " ";
        List<TargetColumn> keyColumns = target.primaryKey().stream().map(name -> target.column(name).orElseThrow())
                .toList();
        String deleteKeys = "WITH " + relation(KEYS, keyColumns, false) + " "
                + dialect.delete().deleteTouchedKeys(target, KEYS);
        String insertRows = rows + insert(target, columns);
        return new SmallBatchSql(rows + Statements.merge(target, columns, ROWS, deleteAction), deleteKeys, insertRows,
                deleteKeys + "; " + insertRows,
                columns.stream().map(SmallBatchSql::bindsTyped).toList(),
                keyColumns.stream().map(SmallBatchSql::bindsTyped).toList());
    }

    /** As {@link Statements#insertFromStaging}; identity columns are written as given, as COPY writes them. */
    private static String insert(TargetTable target, List<TargetColumn> columns)
    {
        String list = Statements.columnList(columns);
        boolean identity = columns.stream().anyMatch(TargetColumn::identityAlways);
        return "INSERT INTO " + Statements.qualified(target.id()) + " (" + list + ")"
                + (identity ? " OVERRIDING SYSTEM VALUE" : "")
                + " SELECT " + list + " FROM " + quote(ROWS) + " WHERE " + quote(StagingColumns.INSERT);
    }

    /**
     * The rows laid out as the staging table that {@link Statements#merge} and {@link Statements#insertFromStaging}
     * read: the insert flag, then the columns.
     */
    private static String rows(List<TargetColumn> columns)
    {
        return relation(ROWS, columns, true);
    }

    private static String relation(String name, List<TargetColumn> columns, boolean insertFlag)
    {
        StringJoiner select = new StringJoiner(", ");
        StringJoiner arrays = new StringJoiner(", ");
        StringJoiner aliases = new StringJoiner(", ");
        int index = 0;
        if (insertFlag) {
            select.add("u.c0 AS " + quote(StagingColumns.INSERT));
            arrays.add("?::boolean[]");
            aliases.add("c0");
            index++;
        }
        for (TargetColumn column : columns) {
            String alias = "c" + index++;
            String type = castType(column.declaredType());
            if (bindsTyped(column)) {
                select.add("u." + alias + " AS " + quote(column.name()));
                arrays.add("?::" + type + "[]");
            }
            else {
                select.add("u." + alias + "::" + type + " AS " + quote(column.name()));
                arrays.add("?::text[]");
            }
            aliases.add(alias);
        }
        return quote(name) + " AS (SELECT " + select + " FROM unnest(" + arrays + ") AS u(" + aliases + "))";
    }

    /**
     * Whether {@code column}'s values are bound as an array literal of its own type (see
     * {@link #TYPED}); else as a text array, cast element by element.
     */
    public static boolean bindsTyped(TargetColumn column)
    {
        return TYPED.contains(castType(column.declaredType()));
    }

    /**
     * The type a text value is cast to for a column of {@code declaredType}: without its type
     * modifier, so that the value reaches the column through an assignment, which rejects a value
     * too long for {@code varchar(n)}, {@code char(n)} or {@code bit(n)} as COPY does (an explicit
     * cast to those types cuts it silently). Fixed-length {@code character} and {@code bit} without
     * a length would mean a length of 1: they become {@code bpchar} and {@code bit varying}.
     */
    public static String castType(String declaredType)
    {
        String type = TYPE_MODIFIER.matcher(declaredType).replaceAll("");
        String arrays = "";
        while (type.endsWith("[]")) {
            type = type.substring(0, type.length() - 2);
            arrays += "[]";
        }
        return switch (type) {
            case "character" -> "bpchar";
            case "bit" -> "bit varying";
            default -> type;
        } + arrays;
    }
}
