package io.pgsink.core;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static io.pgsink.core.ConfigKey.Type.CHARACTER;
import static io.pgsink.core.ConfigKey.Type.LONG;
import static io.pgsink.core.ConfigKey.Type.PASSWORD;
import static io.pgsink.core.ConfigKey.Type.STRING;
import static java.util.Objects.requireNonNull;

/**
 * The sink's configuration, shared by the standalone service and the Kafka Connect connector:
 * parsed once from string properties, validated all at once, immutable.
 *
 * <p>Keys under {@value #TARGET_JDBC_PREFIX} are passed to pgjdbc as connection properties with the
 * prefix removed ({@code target.jdbc.sslmode=verify-full}), so every TLS and driver option is
 * available without pgsink knowing it.
 */
public final class SinkConfig
{
    private static final Logger log = LoggerFactory.getLogger(SinkConfig.class);

    public static final String TARGET_JDBC_PREFIX = "target.jdbc.";

    public static final String SINK_NAME = "sink.name";
    public static final String TARGET_URL = "target.url";
    public static final String TARGET_USER = "target.user";
    public static final String TARGET_PASSWORD = "target.password";
    public static final String TARGET_DIALECT = "target.dialect";
    public static final String TARGET_TABLE_NAME_FORMAT = "target.table.name.format";
    public static final String TARGET_UPDATE_MODE = "target.update.mode";
    public static final String TABLES_WITHOUT_KEY = "tables.without.key";
    public static final String FLUSH_MAX_EVENTS = "flush.max.events";
    public static final String BUFFER_MAX_BYTES = "buffer.max.bytes";
    public static final String FLUSH_INTERVAL_MS = "flush.interval.ms";
    public static final String COPY_DELIMITER = "copy.delimiter";
    public static final String COPY_QUOTE = "copy.quote";
    public static final String COPY_ESCAPE = "copy.escape";
    public static final String COPY_NULL = "copy.null";
    public static final String COPY_NUL_CHARACTER = "copy.nul.character";
    public static final String OFFSETS_SCHEMA = "offsets.schema";
    public static final String OFFSETS_TABLE = "offsets.table";
    public static final String SCHEMA_EVOLUTION = "schema.evolution";
    public static final String ERRORS_TOLERANCE = "errors.tolerance";
    public static final String ERRORS_DEAD_LETTER_TABLE = "errors.deadletter.table";

    public static final List<ConfigKey> KEYS = List.of(
            ConfigKey.optional(SINK_NAME, STRING, "pgsink", "Name of this sink. Source positions are stored under it in the offsets table, so two sinks writing into the same target need different names."),
            ConfigKey.required(TARGET_URL, STRING, "JDBC URL of the target PostgreSQL or Greenplum database, e.g. jdbc:postgresql://host:5432/db."),
            ConfigKey.optional(TARGET_USER, STRING, "", "Target user; empty to take it from the URL or the driver's defaults."),
            ConfigKey.optional(TARGET_PASSWORD, PASSWORD, "", "Target password. Never logged."),
            ConfigKey.choice(TARGET_DIALECT, "auto", List.of("auto", "postgresql", "greenplum"), "Target database kind; auto detects it from version()."),
            ConfigKey.choice(TARGET_UPDATE_MODE, "auto", List.of("auto", "delete-insert"), "How a flush writes keys the target may already hold. auto: on PostgreSQL 15+, where the user may UPDATE the table and rows are narrow (under about 2 kB), one MERGE from the staging table deletes, updates in place or inserts each key (faster, and the table does not grow by a row version per update); elsewhere delete-insert. delete-insert: every touched key is deleted, then its final row inserted. Both leave the same rows, columns the source lacks at their defaults; they differ in the triggers they fire."),
            ConfigKey.optional(TARGET_TABLE_NAME_FORMAT, STRING, "${schema}.${table}", "Target table for a source table: ${schema} and ${table} are replaced by the source schema and table name; the first '.' outside a placeholder separates the target schema from the table name (without one, the target schema is the source schema)."),
            ConfigKey.choice(SCHEMA_EVOLUTION, "none", List.of("none", "add-columns"), "none: target tables must exist with every source column. add-columns: a missing target table is created (primary key from the source key; Greenplum DISTRIBUTED BY it) and new source columns are added while streaming; dropped source columns stay in the target (NULL in new rows). Needs source column types from the adapter."),
            ConfigKey.choice(TABLES_WITHOUT_KEY, "fail", List.of("fail", "append-only"), "What to do with a table that has no primary key: fail with an error, or append-only (inserts are copied straight into the target; updates and deletes fail)."),
            ConfigKey.optional(FLUSH_MAX_EVENTS, LONG, "10000", "Flush when this many events are buffered."),
            ConfigKey.optional(BUFFER_MAX_BYTES, LONG, "67108864", "Flush when the buffered rows take about this many bytes of heap. Bounds memory: the source waits while the flush runs."),
            ConfigKey.optional(FLUSH_INTERVAL_MS, LONG, "1000", "Flush when the oldest buffered event has waited this long."),
            ConfigKey.optional(COPY_DELIMITER, CHARACTER, ",", "COPY CSV field delimiter (one ASCII character)."),
            ConfigKey.optional(COPY_QUOTE, CHARACTER, "\"", "COPY CSV quote character (one ASCII character)."),
            ConfigKey.optional(COPY_ESCAPE, CHARACTER, "\"", "COPY CSV escape character (one ASCII character; may equal the quote)."),
            ConfigKey.optional(COPY_NULL, STRING, "", "COPY CSV NULL string; the default is an unquoted empty field."),
            ConfigKey.choice(COPY_NUL_CHARACTER, "fail", List.of("fail", "strip"), "A NUL character (U+0000) cannot be stored in PostgreSQL text: fail names table, key and column; strip removes it."),
            ConfigKey.optional(OFFSETS_SCHEMA, STRING, "public", "Schema of the offsets table in the target."),
            ConfigKey.optional(OFFSETS_TABLE, STRING, "pgsink_offsets", "Name of the offsets table in the target; created when missing."),
            ConfigKey.choice(ERRORS_TOLERANCE, "none", List.of("none", "all"), "What a row the target refuses (value too long, constraint violated, value that cannot be encoded) does: none stops the sink with an error naming table, key, column, position and reason, and applies nothing of the batch; all isolates the row, applies the rest of the batch and sends the row to the dead-letter table (Kafka Connect: the errant-record reporter)."),
            ConfigKey.optional(ERRORS_DEAD_LETTER_TABLE, STRING, "pgsink_dead_letters", "Dead-letter table (in offsets.schema) for rows skipped under errors.tolerance=all; created when missing. Holds the rows' values, so grant access to it accordingly."));

    private static final Map<String, ConfigKey> KEYS_BY_NAME;

    static {
        Map<String, ConfigKey> byName = new LinkedHashMap<>();
        for (ConfigKey key : KEYS) {
            byName.put(key.name(), key);
        }
        KEYS_BY_NAME = byName;
    }

    private final Map<String, String> values;
    private final Map<String, String> targetJdbcProperties;
    private final CopyFormat copyFormat;
    private final FlushPolicy flushPolicy;
    private final TableNameFormat tableNameFormat;

    private SinkConfig(Map<String, String> values, Map<String, String> targetJdbcProperties, CopyFormat copyFormat, FlushPolicy flushPolicy, TableNameFormat tableNameFormat)
    {
        this.values = values;
        this.targetJdbcProperties = targetJdbcProperties;
        this.copyFormat = copyFormat;
        this.flushPolicy = flushPolicy;
        this.tableNameFormat = tableNameFormat;
    }

    /**
     * Parses and validates {@code properties}. Every key must be one of {@link #KEYS} or start with
     * {@value #TARGET_JDBC_PREFIX}; adapters remove their own keys first.
     *
     * @throws SinkException with {@link ErrorCode#CONFIG} listing every problem found, one per line
     */
    public static SinkConfig parse(Map<String, String> properties)
    {
        List<String> problems = new ArrayList<>();
        SinkConfig config = parse(properties, problems);
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, "Invalid pgsink configuration (" + problems.size() + (problems.size() == 1 ? " problem" : " problems") + "):\n  " + String.join("\n  ", problems));
        }
        return config;
    }

    /**
     * Every problem of {@code properties}, each as {@code Invalid value <v> for configuration <key>:
     * <reason>} (or a missing/unknown key), for adapters that validate more keys of their own and
     * report all problems at once. Empty when {@link #parse(Map)} would succeed.
     */
    public static List<String> problems(Map<String, String> properties)
    {
        List<String> problems = new ArrayList<>();
        parse(properties, problems);
        return problems;
    }

    @org.jetbrains.annotations.Nullable
    private static SinkConfig parse(Map<String, String> properties, List<String> problems)
    {
        requireNonNull(properties, "properties is null");
        Map<String, String> values = new TreeMap<>();
        Map<String, String> jdbc = new TreeMap<>();
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String name = entry.getKey();
            if (name.startsWith(TARGET_JDBC_PREFIX) && name.length() > TARGET_JDBC_PREFIX.length()) {
                jdbc.put(name.substring(TARGET_JDBC_PREFIX.length()), entry.getValue());
            }
            else if (!KEYS_BY_NAME.containsKey(name)) {
                problems.add("Unknown configuration " + name + ": not a pgsink setting (known: " + String.join(", ", KEYS_BY_NAME.keySet()) + ", " + TARGET_JDBC_PREFIX + "*)");
            }
        }
        for (ConfigKey key : KEYS) {
            String value = properties.get(key.name());
            if (value == null) {
                if (key.defaultValue().isEmpty()) {
                    problems.add("Missing required configuration " + key.name() + ": " + key.documentation());
                    continue;
                }
                value = key.defaultValue().get();
            }
            String problem = check(key, value);
            if (problem != null) {
                problems.add("Invalid value " + (key.secret() ? "<masked>" : quoted(value)) + " for configuration " + key.name() + ": " + problem);
                continue;
            }
            values.put(key.name(), value);
        }

        CopyFormat copyFormat = null;
        FlushPolicy flushPolicy = null;
        TableNameFormat tableNameFormat = null;
        if (problems.isEmpty()) {
            char delimiter = values.get(COPY_DELIMITER).charAt(0);
            char quote = values.get(COPY_QUOTE).charAt(0);
            char escape = values.get(COPY_ESCAPE).charAt(0);
            String nullString = values.get(COPY_NULL);
            List<String> formatProblems = CopyFormat.problems(delimiter, quote, escape, nullString);
            for (String problem : formatProblems) {
                problems.add("Invalid COPY format from " + COPY_DELIMITER + "=" + quoted(values.get(COPY_DELIMITER)) + ", " + COPY_QUOTE + "=" + quoted(values.get(COPY_QUOTE))
                        + ", " + COPY_ESCAPE + "=" + quoted(values.get(COPY_ESCAPE)) + ", " + COPY_NULL + "=" + quoted(nullString) + ": " + problem);
            }
            if (formatProblems.isEmpty()) {
                copyFormat = new CopyFormat(delimiter, quote, escape, nullString, NulCharacterHandling.valueOf(values.get(COPY_NUL_CHARACTER).toUpperCase(Locale.ROOT)));
            }
            flushPolicy = new FlushPolicy(Long.parseLong(values.get(FLUSH_MAX_EVENTS)), Long.parseLong(values.get(BUFFER_MAX_BYTES)), Long.parseLong(values.get(FLUSH_INTERVAL_MS)));
            try {
                tableNameFormat = TableNameFormat.parse(values.get(TARGET_TABLE_NAME_FORMAT));
                if (tableNameFormat.usesTopic()) {
                    // the core sink routes by source table; only the Kafka Connect sink knows a record's topic
                    problems.add("Invalid value " + quoted(values.get(TARGET_TABLE_NAME_FORMAT)) + " for configuration " + TARGET_TABLE_NAME_FORMAT + ": " + TableNameFormat.TOPIC
                            + " is the Kafka topic of a record, which only the Kafka Connect sink reads; route by ${schema} and ${table}");
                }
            }
            catch (IllegalArgumentException e) {
                problems.add("Invalid value " + quoted(values.get(TARGET_TABLE_NAME_FORMAT)) + " for configuration " + TARGET_TABLE_NAME_FORMAT + ": " + e.getMessage());
            }
            if (!values.get(TARGET_URL).startsWith("jdbc:postgresql:")) {
                problems.add("Invalid value " + quoted(values.get(TARGET_URL)) + " for configuration " + TARGET_URL + ": must be a pgjdbc URL starting with jdbc:postgresql:");
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return new SinkConfig(values, jdbc, copyFormat, flushPolicy, tableNameFormat);
    }

    private static String check(ConfigKey key, String value)
    {
        switch (key.type()) {
            case STRING, PASSWORD -> {
                return key.defaultValue().isEmpty() && value.isBlank() ? "must not be empty" : null;
            }
            case LONG -> {
                try {
                    long parsed = Long.parseLong(value.trim());
                    if (parsed < (key.name().endsWith(".ms") ? 0 : 1)) {
                        return "must be " + (key.name().endsWith(".ms") ? "zero or more" : "at least 1");
                    }
                    return null;
                }
                catch (NumberFormatException e) {
                    return "not a whole number";
                }
            }
            case CHARACTER -> {
                return value.length() == 1 ? null : "must be exactly one character";
            }
            case ENUM -> {
                return key.allowedValues().contains(value) ? null : "must be one of " + String.join(", ", key.allowedValues());
            }
        }
        throw new IllegalStateException("unknown type " + key.type());
    }

    private static String quoted(String value)
    {
        return "'" + value + "'";
    }

    public String sinkName()
    {
        return values.get(SINK_NAME);
    }

    public String targetUrl()
    {
        return values.get(TARGET_URL);
    }

    public Optional<String> targetUser()
    {
        return nonEmpty(values.get(TARGET_USER));
    }

    public Optional<String> targetPassword()
    {
        return nonEmpty(values.get(TARGET_PASSWORD));
    }

    /** {@code auto}, {@code postgresql} or {@code greenplum}. */
    public String targetDialect()
    {
        return values.get(TARGET_DIALECT);
    }

    /** Whether flushes may MERGE changes into existing rows where the target allows it ({@value #TARGET_UPDATE_MODE}). */
    public boolean mergesUpdates()
    {
        return values.get(TARGET_UPDATE_MODE).equals("auto");
    }

    /** Extra pgjdbc connection properties from {@value #TARGET_JDBC_PREFIX}* keys, prefix removed. */
    public Map<String, String> targetJdbcProperties()
    {
        return targetJdbcProperties;
    }

    public TableNameFormat tableNameFormat()
    {
        return tableNameFormat;
    }

    /** {@code schema.evolution=add-columns}. */
    public boolean evolvesSchema()
    {
        return values.get(SCHEMA_EVOLUTION).equals("add-columns");
    }

    public boolean appendOnlyWithoutKey()
    {
        return values.get(TABLES_WITHOUT_KEY).equals("append-only");
    }

    public FlushPolicy flushPolicy()
    {
        return flushPolicy;
    }

    public CopyFormat copyFormat()
    {
        return copyFormat;
    }

    public String offsetsSchema()
    {
        return values.get(OFFSETS_SCHEMA);
    }

    public String offsetsTable()
    {
        return values.get(OFFSETS_TABLE);
    }

    /** Whether rows the target refuses are skipped (and sent to the dead-letter destination) rather than stopping the sink. */
    public boolean toleratesRejectedRows()
    {
        return values.get(ERRORS_TOLERANCE).equals("all");
    }

    public String deadLetterTable()
    {
        return values.get(ERRORS_DEAD_LETTER_TABLE);
    }

    /** The effective configuration, secrets masked, for logging once at start. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new TreeMap<>();
        for (ConfigKey key : KEYS) {
            described.put(key.name(), key.secret() ? "<masked>" : quoted(values.get(key.name())));
        }
        for (Map.Entry<String, String> entry : targetJdbcProperties.entrySet()) {
            boolean secret = entry.getKey().toLowerCase(Locale.ROOT).contains("password");
            described.put(TARGET_JDBC_PREFIX + entry.getKey(), secret ? "<masked>" : quoted(entry.getValue()));
        }
        return described;
    }

    public void log()
    {
        if (log.isInfoEnabled()) {
            describe().forEach((key, value) -> log.info("{} - {} = {}", sinkName(), key, value));
        }
    }

    private static Optional<String> nonEmpty(String value)
    {
        return value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    @Override
    public String toString()
    {
        return describe().toString();
    }
}
