package io.pgsink.connector.standalone.source;

import io.debezium.connector.postgresql.PostgresConnectorConfig.AutoCreateMode;
import io.pgsink.core.config.definition.ConfigProblem;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import static java.util.Objects.requireNonNull;

/**
 * Which source tables Debezium captures, from its include and exclude lists, read the way Debezium
 * reads them: comma-separated regular expressions matched, whole and ignoring case, against
 * {@code schema} ({@code schema.*.list}) or {@code schema.table} ({@code table.*.list}). The lists
 * are compiled when the configuration is validated, so that {@code run} and {@code check} refuse
 * an invalid expression alike, as a configuration problem. The column lists say which columns the initial load copies.
 *
 * <p>Immutable.
 */
public final class CapturedTables
{
    static final String SCHEMA_INCLUDE_LIST = "schema.include.list";
    static final String SCHEMA_EXCLUDE_LIST = "schema.exclude.list";
    static final String TABLE_INCLUDE_LIST = "table.include.list";
    static final String TABLE_EXCLUDE_LIST = "table.exclude.list";
    static final String COLUMN_INCLUDE_LIST = "column.include.list";
    static final String COLUMN_EXCLUDE_LIST = "column.exclude.list";
    /** The Debezium keys whose values are lists of regular expressions, as this class checks them. */
    static final List<String> REGEX_LIST_KEYS = List.of(SCHEMA_INCLUDE_LIST, SCHEMA_EXCLUDE_LIST, TABLE_INCLUDE_LIST,
            TABLE_EXCLUDE_LIST, COLUMN_INCLUDE_LIST, COLUMN_EXCLUDE_LIST);

    private static final List<String> SYSTEM_SCHEMAS = List.of("pg_catalog", "information_schema", "pg_toast");

    private final List<Pattern> schemaIncludes;
    private final List<Pattern> schemaExcludes;
    private final List<Pattern> tableIncludes;
    private final List<Pattern> tableExcludes;
    private final List<Pattern> columnIncludes;
    private final List<Pattern> columnExcludes;

    private CapturedTables(List<Pattern> schemaIncludes, List<Pattern> schemaExcludes, List<Pattern> tableIncludes,
            List<Pattern> tableExcludes,
            List<Pattern> columnIncludes, List<Pattern> columnExcludes)
    {
        this.columnIncludes = List.copyOf(columnIncludes);
        this.columnExcludes = List.copyOf(columnExcludes);
        this.schemaIncludes = List.copyOf(schemaIncludes);
        this.schemaExcludes = List.copyOf(schemaExcludes);
        this.tableIncludes = List.copyOf(tableIncludes);
        this.tableExcludes = List.copyOf(tableExcludes);
    }

    /**
     * Compiles the lists of {@code debezium} (the source keys, prefix removed); empty after adding
     * a problem per invalid list to {@code problems}, each naming the key with {@code keyPrefix}.
     */
    public static Optional<CapturedTables> compile(Map<String, String> debezium, String keyPrefix,
            List<ConfigProblem> problems)
    {
        requireNonNull(debezium, "debezium is null");
        int problemsBefore = problems.size();
        List<List<Pattern>> lists = new ArrayList<>();
        for (String key : REGEX_LIST_KEYS) {
            lists.add(patterns(debezium.get(key), keyPrefix + key, problems));
        }
        if (problems.size() > problemsBefore) {
            return Optional.empty();
        }
        return Optional.of(new CapturedTables(lists.get(0), lists.get(1), lists.get(2), lists.get(3), lists.get(4),
                lists.get(5)));
    }

    private static List<Pattern> patterns(String value, String key, List<ConfigProblem> problems)
    {
        List<Pattern> patterns = new ArrayList<>();
        if (value == null || value.isBlank()) {
            return patterns;
        }
        for (String part : value.split(",")) {
            if (part.isBlank()) {
                continue;
            }
            try {
                patterns.add(Pattern.compile(part.trim(), Pattern.CASE_INSENSITIVE));
            }
            catch (PatternSyntaxException e) {
                // the description and index, not getMessage(): that repeats the pattern over two more lines
                problems.add(ConfigProblem.invalid(key, value, false,
                        "'" + part.trim() + "' is not a regular expression: " + e.getDescription()
                        + (e.getIndex() >= 0 ? " near index " + e.getIndex() : "")));
                return patterns;
            }
        }
        return patterns;
    }

    /**
     * What {@code check} and {@code run} say when no table matches the lists: under
     * {@code publication.autocreate.mode=filtered} a problem (Debezium cannot create a publication
     * of no table), else a warning (an all-tables publication captures tables created later).
     */
    public static String nothingCaptured(AutoCreateMode publicationMode)
    {
        String nothing = "no table matches source." + TABLE_INCLUDE_LIST + ", source." + TABLE_EXCLUDE_LIST
                + ", source." + SCHEMA_INCLUDE_LIST
                + " and source." + SCHEMA_EXCLUDE_LIST + ": nothing would be captured";
        return publicationMode == AutoCreateMode.FILTERED
                ? nothing + ", and publication.autocreate.mode=filtered cannot create a publication of no table: fix "
                        + "the lists"
                : nothing + " until a matching table is created";
    }

    /** Whether Debezium captures {@code schema.table}. */
    public boolean captures(String schema, String table)
    {
        if (SYSTEM_SCHEMAS.contains(schema)) {
            return false;
        }
        String qualified = schema + "." + table;
        if (!schemaIncludes.isEmpty() && schemaIncludes.stream().noneMatch(pattern
                -> pattern.matcher(schema).matches())) {
            return false;
        }
        if (schemaExcludes.stream().anyMatch(pattern -> pattern.matcher(schema).matches())) {
            return false;
        }
        if (!tableIncludes.isEmpty() && tableIncludes.stream().noneMatch(pattern
                -> pattern.matcher(qualified).matches())) {
            return false;
        }
        return tableExcludes.stream().noneMatch(pattern -> pattern.matcher(qualified).matches());
    }

    /** Whether Debezium captures column {@code schema.table.column} (of a captured table). */
    public boolean capturesColumn(String schema, String table, String column)
    {
        String qualified = schema + "." + table + "." + column;
        if (!columnIncludes.isEmpty() && columnIncludes.stream().noneMatch(pattern
                -> pattern.matcher(qualified).matches())) {
            return false;
        }
        return columnExcludes.stream().noneMatch(pattern -> pattern.matcher(qualified).matches());
    }
}
