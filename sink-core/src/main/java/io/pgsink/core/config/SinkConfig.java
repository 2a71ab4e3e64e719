package io.pgsink.core.config;

import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigValues;
import io.pgsink.core.error.Backoff;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.ErrorsTolerance;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnPatterns;
import io.pgsink.core.mapping.ColumnSelection;
import io.pgsink.core.mapping.TableNameFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

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
    public static final String TARGET_SESSION_REPLICATION_ROLE = "target.session.replication.role";
    public static final String TARGET_TOAST_COMPRESSION = "target.toast.compression";
    public static final String COLUMN_INCLUDE_LIST = ColumnSelection.INCLUDE_LIST_KEY;
    public static final String COLUMN_EXCLUDE_LIST = ColumnSelection.EXCLUDE_LIST_KEY;
    public static final String COLUMN_RENAME = ColumnSelection.RENAME_KEY;
    public static final String TABLES_WITHOUT_KEY = "tables.without.key";
    public static final String FLUSH_MAX_EVENTS = "flush.max.events";
    public static final String BUFFER_MAX_BYTES = "buffer.max.bytes";
    public static final String FLUSH_INTERVAL_MS = "flush.interval.ms";
    public static final String FLUSH_PIPELINED = "flush.pipelined";
    public static final String FLUSH_SMALL_BATCH_MAX_EVENTS = "flush.small.batch.max.events";
    public static final String COPY_FORMAT = "copy.format";
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
    public static final String RETRY_BACKOFF_MAX_MS = "retry.backoff.max.ms";
    public static final String METADATA_OPERATION_COLUMN = "metadata.operation.column";
    public static final String METADATA_SOURCE_TIMESTAMP_COLUMN = "metadata.source.timestamp.column";
    public static final String METADATA_SOURCE_POSITION_COLUMN = "metadata.source.position.column";
    public static final String METADATA_APPLIED_TIMESTAMP_COLUMN = "metadata.applied.timestamp.column";
    public static final String DELETE_MODE = "delete.mode";
    public static final String DELETE_FLAG_COLUMN = "delete.flag.column";
    public static final String DELETE_TIMESTAMP_COLUMN = "delete.timestamp.column";
    public static final String TABLE_MODE = "table.mode";
    public static final String HISTORY_TABLE_INCLUDE_LIST = "history.table.include.list";

    /**
     * Every key of the sink, shared by both adapters, in the order the configuration reference lists them:
     * {@link SinkKeys#ALL}.
     */
    public static final List<ConfigKey<?>> KEYS = SinkKeys.ALL;

    private static final List<ConfigKey<?>> COPY_FORMAT_KEYS = List.of(SinkKeys.COPY_DELIMITER, SinkKeys.COPY_QUOTE,
            SinkKeys.COPY_ESCAPE, SinkKeys.COPY_NULL, SinkKeys.COPY_NUL_CHARACTER);

    private final ConfigValues values;
    private final Map<String, String> targetJdbcProperties;
    private final CopyFormat copyFormat;
    private final FlushPolicy flushPolicy;
    private final TableNameFormat tableNameFormat;
    private final TargetDialect targetDialect;
    private final UpdateMode updateMode;
    private final SchemaEvolutionLevel schemaEvolution;
    private final TablesWithoutKey tablesWithoutKey;
    private final ErrorsTolerance errorsTolerance;
    private final Backoff retryBackoff;
    private final ColumnSelection columnSelection;
    private final ChangeMetadata changeMetadata;

    private SinkConfig(ConfigValues values, Map<String, String> targetJdbcProperties, CopyFormat copyFormat,
            ColumnSelection columnSelection, ChangeMetadata changeMetadata)
    {
        this.columnSelection = requireNonNull(columnSelection, "columnSelection is null");
        this.changeMetadata = requireNonNull(changeMetadata, "changeMetadata is null");
        this.values = requireNonNull(values, "values is null");
        this.targetJdbcProperties = Collections.unmodifiableMap(new TreeMap<>(targetJdbcProperties));
        this.copyFormat = requireNonNull(copyFormat, "copyFormat is null");
        this.flushPolicy = new FlushPolicy(values.get(SinkKeys.FLUSH_MAX_EVENTS), values.get(SinkKeys.BUFFER_MAX_BYTES),
                values.get(SinkKeys.FLUSH_INTERVAL_MS), values.get(SinkKeys.FLUSH_PIPELINED));
        this.tableNameFormat = values.get(SinkKeys.TARGET_TABLE_NAME_FORMAT);
        this.targetDialect = values.get(SinkKeys.TARGET_DIALECT);
        this.updateMode = values.get(SinkKeys.TARGET_UPDATE_MODE);
        this.schemaEvolution = values.get(SinkKeys.SCHEMA_EVOLUTION);
        this.tablesWithoutKey = values.get(SinkKeys.TABLES_WITHOUT_KEY);
        this.errorsTolerance = values.get(SinkKeys.ERRORS_TOLERANCE);
        this.retryBackoff = Backoff.upTo(values.get(SinkKeys.RETRY_BACKOFF_MAX_MS));
    }

    /**
     * Parses and validates {@code properties}. Every key must be one of {@link #KEYS} or start with
     * {@value #TARGET_JDBC_PREFIX}; adapters remove their own keys first.
     *
     * @throws SinkException with {@link ErrorCode#CONFIG} listing every problem found, one per line
     */
    public static SinkConfig parse(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        return ConfigProblem.valueOrThrow(validate(properties, problems), problems, "Invalid pgsink configuration",
                message -> new SinkException(ErrorCode.CONFIG, message));
    }

    /**
     * Every problem of {@code properties} (a missing, invalid or unknown key, values that do not
     * go together), for adapters that validate more keys of their own and report all problems at
     * once. Empty when {@link #parse(Map)} would succeed.
     */
    public static List<ConfigProblem> problems(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        validate(properties, problems);
        return problems;
    }

    /**
     * The configuration {@code properties} describe, or empty after adding every problem to
     * {@code problems}: one validation for adapters that need both the configuration and the
     * problems of their own keys.
     */
    public static Optional<SinkConfig> validate(Map<String, String> properties, List<ConfigProblem> problems)
    {
        requireNonNull(properties, "properties is null");
        requireNonNull(problems, "problems is null");
        int problemsBefore = problems.size();
        Map<String, String> jdbc = new TreeMap<>();
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String name = entry.getKey();
            if (name.startsWith(TARGET_JDBC_PREFIX) && name.length() > TARGET_JDBC_PREFIX.length()) {
                jdbc.put(name.substring(TARGET_JDBC_PREFIX.length()), entry.getValue());
            }
            else if (!isSinkKey(name)) {
                problems.add(ConfigProblem.unknown(name, "not a pgsink setting (known: "
                        + String.join(", ", ConfigKey.names(KEYS)) + ", " + TARGET_JDBC_PREFIX + "*)"));
            }
        }
        ConfigValues values = ConfigValues.read(KEYS, properties);
        problems.addAll(values.problems());

        Optional<CopyFormat> copyFormat = copyFormat(values, problems);
        Optional<ColumnSelection> columnSelection = columnSelection(values, problems);
        Optional<ChangeMetadata> changeMetadata = ChangeMetadata.read(values, problems);
        if (problems.size() > problemsBefore) {
            return Optional.empty();
        }
        return Optional.of(new SinkConfig(values, jdbc, copyFormat.orElseThrow(), columnSelection.orElseThrow(),
                changeMetadata.orElseThrow()));
    }

    /** The column selection from its keys, when each is valid and they go together. */
    private static Optional<ColumnSelection> columnSelection(ConfigValues values, List<ConfigProblem> problems)
    {
        if (!values.isValid(SinkKeys.COLUMN_INCLUDE_LIST) || !values.isValid(SinkKeys.COLUMN_EXCLUDE_LIST)
                || !values.isValid(SinkKeys.COLUMN_RENAME)) {
            return Optional.empty();
        }
        ColumnPatterns include = values.get(SinkKeys.COLUMN_INCLUDE_LIST);
        ColumnPatterns exclude = values.get(SinkKeys.COLUMN_EXCLUDE_LIST);
        if (!include.isEmpty() && !exclude.isEmpty()) {
            Map<String, String> shown = new LinkedHashMap<>();
            shown.put(COLUMN_INCLUDE_LIST, ConfigProblem.quoted(include.toString()));
            shown.put(COLUMN_EXCLUDE_LIST, ConfigProblem.quoted(exclude.toString()));
            problems.add(ConfigProblem.combination("column selection", shown,
                    "set one of the two lists, not both (as Debezium's column lists)"));
            return Optional.empty();
        }
        return Optional.of(new ColumnSelection(include, exclude, values.get(SinkKeys.COLUMN_RENAME)));
    }

    /** The COPY format from its keys, when each is valid and they go together. */
    private static Optional<CopyFormat> copyFormat(ConfigValues values, List<ConfigProblem> problems)
    {
        for (ConfigKey<?> key : COPY_FORMAT_KEYS) {
            if (!values.isValid(key)) {
                return Optional.empty();
            }
        }
        char delimiter = values.get(SinkKeys.COPY_DELIMITER);
        char quote = values.get(SinkKeys.COPY_QUOTE);
        char escape = values.get(SinkKeys.COPY_ESCAPE);
        String nullString = values.get(SinkKeys.COPY_NULL);
        List<String> formatProblems = CopyFormat.problems(delimiter, quote, escape, nullString);
        if (formatProblems.isEmpty()) {
            return Optional.of(new CopyFormat(delimiter, quote, escape, nullString,
                    values.get(SinkKeys.COPY_NUL_CHARACTER)));
        }
        Map<String, String> shown = new LinkedHashMap<>();
        for (ConfigKey<?> key
                : List.of(SinkKeys.COPY_DELIMITER, SinkKeys.COPY_QUOTE, SinkKeys.COPY_ESCAPE, SinkKeys.COPY_NULL)) {
            shown.put(key.name(), key.shown(values.text(key)));
        }
        for (String problem : formatProblems) {
            problems.add(ConfigProblem.combination("COPY format", shown, problem));
        }
        return Optional.empty();
    }

    /** Whether {@code name} is one of {@link #KEYS}. */
    public static boolean isSinkKey(String name)
    {
        return ConfigKey.names(KEYS).contains(name);
    }

    public String sinkName()
    {
        return values.get(SinkKeys.SINK_NAME);
    }

    public String targetUrl()
    {
        return values.get(SinkKeys.TARGET_URL);
    }

    public Optional<String> targetUser()
    {
        return nonEmpty(values.get(SinkKeys.TARGET_USER));
    }

    public Optional<String> targetPassword()
    {
        return nonEmpty(values.get(SinkKeys.TARGET_PASSWORD));
    }

    public TargetDialect targetDialect()
    {
        return targetDialect;
    }

    public UpdateMode updateMode()
    {
        return updateMode;
    }

    /**
     * Whether flushes may MERGE changes into existing rows where the target allows it ({@value #TARGET_UPDATE_MODE}).
     */
    public boolean mergesUpdates()
    {
        return switch (updateMode) {
            case AUTO -> true;
            case DELETE_INSERT -> false;
        };
    }

    public SessionReplicationRole sessionReplicationRole()
    {
        return values.get(SinkKeys.TARGET_SESSION_REPLICATION_ROLE);
    }

    public ToastCompression toastCompression()
    {
        return values.get(SinkKeys.TARGET_TOAST_COMPRESSION);
    }

    /**
     * Which source columns are written, under which target names ({@value #COLUMN_INCLUDE_LIST},
     * {@value #COLUMN_EXCLUDE_LIST}, {@value #COLUMN_RENAME}).
     */
    public ColumnSelection columnSelection()
    {
        return columnSelection;
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

    public SchemaEvolutionLevel schemaEvolution()
    {
        return schemaEvolution;
    }

    /** {@code schema.evolution=add-columns} or {@code add-columns-and-widen}. */
    public boolean evolvesSchema()
    {
        return switch (schemaEvolution) {
            case NONE -> false;
            case ADD_COLUMNS, ADD_COLUMNS_AND_WIDEN -> true;
        };
    }

    /** {@code schema.evolution=add-columns-and-widen}. */
    public boolean widensColumns()
    {
        return schemaEvolution == SchemaEvolutionLevel.ADD_COLUMNS_AND_WIDEN;
    }

    public TablesWithoutKey tablesWithoutKey()
    {
        return tablesWithoutKey;
    }

    /** {@code tables.without.key=append-only}. */
    public boolean appendOnlyWithoutKey()
    {
        return switch (tablesWithoutKey) {
            case FAIL -> false;
            case APPEND_ONLY -> true;
        };
    }

    public FlushPolicy flushPolicy()
    {
        return flushPolicy;
    }

    public CopyFormat copyFormat()
    {
        return copyFormat;
    }

    /**
     * A table's changes in a flush, after merging by key, up to which they are bound as arrays of
     * one statement instead of COPYed through the staging table ({@value #FLUSH_SMALL_BATCH_MAX_EVENTS});
     * 0 never.
     */
    public int smallBatchMaxEvents()
    {
        return values.get(SinkKeys.FLUSH_SMALL_BATCH_MAX_EVENTS).intValue();
    }

    /** How rows travel in COPY ({@value #COPY_FORMAT}). */
    public CopyDataFormat copyDataFormat()
    {
        return values.get(SinkKeys.COPY_FORMAT);
    }

    public String offsetsSchema()
    {
        return values.get(SinkKeys.OFFSETS_SCHEMA);
    }

    public String offsetsTable()
    {
        return values.get(SinkKeys.OFFSETS_TABLE);
    }

    public ErrorsTolerance errorsTolerance()
    {
        return errorsTolerance;
    }

    /**
     * Whether rows the target refuses are skipped (and sent to the dead-letter destination) rather than stopping the
     * sink.
     */
    public boolean toleratesRejectedRows()
    {
        return switch (errorsTolerance) {
            case NONE -> false;
            case ALL -> true;
        };
    }

    public String deadLetterTable()
    {
        return values.get(SinkKeys.ERRORS_DEAD_LETTER_TABLE);
    }

    /** The metadata columns, {@code delete.mode} and the history tables. */
    public ChangeMetadata changeMetadata()
    {
        return changeMetadata;
    }

    /** How long to wait between attempts while the target is unreachable ({@value #RETRY_BACKOFF_MAX_MS}). */
    public Backoff retryBackoff()
    {
        return retryBackoff;
    }

    /** The effective configuration, secrets masked, for logging once at start. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new TreeMap<>(values.describe());
        for (Map.Entry<String, String> entry : targetJdbcProperties.entrySet()) {
            boolean secret = entry.getKey().toLowerCase(Locale.ROOT).contains("password");
            described.put(TARGET_JDBC_PREFIX + entry.getKey(), secret ? ConfigProblem.MASKED
                    : ConfigProblem.quoted(entry.getValue()));
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
