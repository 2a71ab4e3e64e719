package io.pgsink.connector.standalone.config;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.connector.standalone.engine.DebeziumProperties;
import io.pgsink.connector.standalone.engine.FlushBoundary;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.monitoring.HttpSecurity;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.SinkKeys;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigValues;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static java.util.Objects.requireNonNull;

/**
 * The standalone service's configuration: one properties file, environment variables on top, split
 * into three parts and validated all at once.
 * <ul>
 * <li>{@code source.*}: the Debezium PostgreSQL connector and engine, prefix removed
 *     ({@link DebeziumProperties}: pgsink's defaults, the keys it owns, Debezium's validation),
 *     and the include and exclude lists compiled ({@link CapturedTables}).</li>
 * <li>{@link #KEYS}: the service's own keys (HTTP endpoint, progress logging).</li>
 * <li>everything else: the sink ({@link SinkConfig#KEYS} and {@code target.jdbc.*}).</li>
 * </ul>
 * An environment variable {@code PGSINK_<KEY>} overrides key {@code <key>}; see
 * {@link EnvironmentOverrides} for the variables outside the declared keys.
 */
public final class StandaloneConfig
{
    private static final Logger log = LoggerFactory.getLogger(StandaloneConfig.class);

    public static final String SOURCE_PREFIX = DebeziumProperties.SOURCE_PREFIX;
    public static final String ENVIRONMENT_PREFIX = "PGSINK_";

    public static final String HTTP_PORT = "http.port";
    public static final String HTTP_HOST = "http.host";
    public static final String PROGRESS_INTERVAL_MS = "progress.interval.ms";
    public static final String SLOT_CREATION_TIMEOUT_MS = "slot.creation.timeout.ms";
    public static final String SLOT_CREATION_LOG_INTERVAL_MS = "slot.creation.log.interval.ms";
    /** The Debezium engine's bound on starting its task, which includes creating the slot. */
    static final String TASK_MANAGEMENT_TIMEOUT_MS = "internal.task.management.timeout.ms";
    public static final String FLUSH_BOUNDARY = "flush.boundary";
    /** The service's own keys ({@link ServiceKeys}); the sink's are {@link SinkConfig#KEYS}. */
    public static final List<ConfigKey<?>> KEYS = ServiceKeys.KEYS;

    /**
     * The first words of every declared key, and the pass-through prefixes: where a
     * {@code PGSINK_*} variable is configuration. Derived, so that a new namespace cannot be
     * forgotten.
     */
    public static final List<String> ENVIRONMENT_NAMESPACES = EnvironmentOverrides.namespaces();

    /**
     * {@code source.snapshot.mode} values: {@code initial} (the default) is pgsink's COPY load; the others are
     * Debezium's.
     */
    static final String SNAPSHOT_MODE = "snapshot.mode";
    static final String INITIAL = "initial";
    static final String PROVIDE_TRANSACTION_METADATA = "provide.transaction.metadata";

    private final SinkConfig sink;
    private final Map<String, String> debezium;
    private final CapturedTables capturedTables;
    private final ConfigValues own;
    private final boolean copyLoad;

    private StandaloneConfig(SinkConfig sink, Map<String, String> debezium, CapturedTables capturedTables,
            ConfigValues own, boolean copyLoad)
    {
        this.copyLoad = copyLoad;
        this.sink = requireNonNull(sink, "sink is null");
        this.debezium = Collections.unmodifiableMap(new TreeMap<>(debezium));
        this.capturedTables = requireNonNull(capturedTables, "capturedTables is null");
        this.own = requireNonNull(own, "own is null");
    }

    /**
     * Reads {@code file} and applies {@code environment} overrides.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) when the file cannot be read or the configuration is invalid
     */
    public static StandaloneConfig load(Path file, Map<String, String> environment)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        Map<String, String> properties = withEnvironment(read(file), environment, problems);
        return ConfigProblem.valueOrThrow(validate(properties, problems), problems, "Invalid pgsink configuration",
                message -> new SinkException(ErrorCode.CONFIG, message));
    }

    static Map<String, String> read(Path file)
    {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        catch (IOException e) {
            throw new SinkException(ErrorCode.CONFIG,
                    "Cannot read configuration file " + file.toAbsolutePath() + ": " + e, e);
        }
        Map<String, String> values = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            values.put(name.trim(), properties.getProperty(name).trim());
        }
        return values;
    }

    /** Every key pgsink declares: the sink's ({@link SinkConfig#KEYS}) and the service's own ({@link #KEYS}). */
    public static List<ConfigKey<?>> declaredKeys()
    {
        List<ConfigKey<?>> keys = new ArrayList<>(SinkConfig.KEYS);
        keys.addAll(KEYS);
        return List.copyOf(keys);
    }

    /**
     * {@code properties} with the {@code PGSINK_*} variables of {@code environment} applied; a
     * variable in one of pgsink's namespaces that names no key is added to {@code problems}
     * ({@link EnvironmentOverrides}).
     */
    public static Map<String, String> withEnvironment(Map<String, String> properties, Map<String, String> environment,
            List<ConfigProblem> problems)
    {
        return EnvironmentOverrides.withEnvironment(properties, environment, problems);
    }

    /** {@code target.password} → {@code PGSINK_TARGET_PASSWORD}. */
    public static String variableName(String key)
    {
        return EnvironmentOverrides.variableName(key);
    }

    /**
     * Splits and validates {@code properties} (file keys, environment already applied): what
     * {@code run} and {@code check} both start with.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) naming every problem of every part, one per line
     */
    public static StandaloneConfig parse(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        return ConfigProblem.valueOrThrow(validate(properties, problems), problems, "Invalid pgsink configuration",
                message -> new SinkException(ErrorCode.CONFIG, message));
    }

    /** Every problem of {@code properties}, each once; empty when {@link #parse} would succeed. */
    public static List<ConfigProblem> problems(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        validate(properties, problems);
        return problems;
    }

    private static Optional<StandaloneConfig> validate(Map<String, String> properties, List<ConfigProblem> problems)
    {
        requireNonNull(properties, "properties is null");
        Map<String, String> source = new TreeMap<>();
        Map<String, String> ownProperties = new TreeMap<>();
        Map<String, String> sinkProperties = new TreeMap<>();
        for (Map.Entry<String, String> entry : properties.entrySet()) {
            String key = entry.getKey();
            if (key.startsWith(SOURCE_PREFIX)) {
                source.put(key.substring(SOURCE_PREFIX.length()), entry.getValue());
            }
            else if (ConfigKey.names(KEYS).contains(key)) {
                ownProperties.put(key, entry.getValue());
            }
            else {
                sinkProperties.put(key, entry.getValue());
            }
        }

        List<ConfigProblem> found = new ArrayList<>();
        String givenName = sinkProperties.get(SinkConfig.SINK_NAME);
        if (givenName != null && givenName.isBlank()) {
            // the Kafka Connect sink reads an empty sink.name as its connector's name; here it would name the slot,
            // the publication and the stored positions
            found.add(ConfigProblem.invalid(SinkConfig.SINK_NAME, givenName, false, "must not be empty"));
            sinkProperties.remove(SinkConfig.SINK_NAME);
        }
        Optional<SinkConfig> sink = SinkConfig.validate(sinkProperties, found);
        ConfigValues own = ConfigValues.read(KEYS, ownProperties);
        found.addAll(own.problems());
        HttpSecurity.of(own, found);

        String sinkName = sink.map(SinkConfig::sinkName).orElse(sinkProperties.getOrDefault(SinkConfig.SINK_NAME,
                SinkKeys.SINK_NAME.defaultValue().orElseThrow()));
        Map<String, String> debezium = DebeziumProperties.of(source, sinkName, sink, found);
        boolean copyLoad = INITIAL.equalsIgnoreCase(source.getOrDefault(SNAPSHOT_MODE, INITIAL));
        if (copyLoad) {
            // pgsink loads the tables itself, at the slot's snapshot; Debezium only streams
            debezium.put(SNAPSHOT_MODE, "no_data");
        }
        if (own.problems().isEmpty() && own.get(ServiceKeys.FLUSH_BOUNDARY_KEY) == FlushBoundary.TRANSACTION) {
            requireTransactionMetadata(source, debezium, found);
        }
        Optional<CapturedTables> capturedTables = CapturedTables.compile(debezium, SOURCE_PREFIX, found);
        found.addAll(DebeziumProperties.problems(source, debezium, found));

        // Debezium validates some fields once per field that depends on them
        problems.addAll(new LinkedHashSet<>(found));
        if (!found.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new StandaloneConfig(sink.orElseThrow(), debezium, capturedTables.orElseThrow(), own,
                copyLoad));
    }

    /** Transaction-aligned flushes find the transactions' ends in Debezium's BEGIN and END records. */
    private static void requireTransactionMetadata(Map<String, String> source, Map<String, String> debezium,
            List<ConfigProblem> problems)
    {
        String given = source.get(PROVIDE_TRANSACTION_METADATA);
        if (given != null && !given.equalsIgnoreCase("true")) {
            problems.add(ConfigProblem.invalid(SOURCE_PREFIX + PROVIDE_TRANSACTION_METADATA, given, false,
                    FLUSH_BOUNDARY + "=transaction needs Debezium's transaction records to know where transactions "
                            + "end; remove it or set " + FLUSH_BOUNDARY + "=batch"));
        }
        debezium.put(PROVIDE_TRANSACTION_METADATA, "true");
    }

    /**
     * A name usable as a replication slot, publication and topic prefix: lower case letters, digits and underscores.
     */
    public static String identifier(String name)
    {
        return DebeziumProperties.identifier(name);
    }

    public SinkConfig sink()
    {
        return sink;
    }

    /** The Debezium engine and connector properties, pgsink's defaults and owned keys applied. */
    public Map<String, String> debezium()
    {
        return debezium;
    }

    public Properties debeziumProperties()
    {
        Properties properties = new Properties();
        properties.putAll(debezium);
        properties.putIfAbsent(TASK_MANAGEMENT_TIMEOUT_MS, Long.toString(slotCreationTimeoutMillis()));
        return properties;
    }

    /**
     * How long starting may wait for the replication slot; the engine's {@value #TASK_MANAGEMENT_TIMEOUT_MS} when
     * given.
     */
    public long slotCreationTimeoutMillis()
    {
        String engine = debezium.get(TASK_MANAGEMENT_TIMEOUT_MS);
        return engine != null ? Long.parseLong(engine) : own.get(ServiceKeys.SLOT_CREATION_TIMEOUT_MS_KEY);
    }

    public long slotCreationLogIntervalMillis()
    {
        return own.get(ServiceKeys.SLOT_CREATION_LOG_INTERVAL_MS_KEY);
    }

    /** Which source tables Debezium captures, from the include and exclude lists. */
    public CapturedTables capturedTables()
    {
        return capturedTables;
    }

    /** The port of the HTTP endpoint; 0 for any free port, -1 when disabled. */
    public int httpPort()
    {
        return Math.toIntExact(own.get(ServiceKeys.HTTP_PORT_KEY));
    }

    public String httpHost()
    {
        return own.get(ServiceKeys.HTTP_HOST_KEY);
    }

    /** How the HTTP endpoint is secured; reads the TLS files again. */
    public HttpSecurity httpSecurity()
    {
        List<ConfigProblem> problems = new ArrayList<>();
        return ConfigProblem.valueOrThrow(HttpSecurity.of(own, problems), problems, "Invalid pgsink configuration",
                message -> new SinkException(ErrorCode.CONFIG, message));
    }

    /** Where a flush may end ({@value #FLUSH_BOUNDARY}). */
    public FlushBoundary flushBoundary()
    {
        return own.get(ServiceKeys.FLUSH_BOUNDARY_KEY);
    }

    public long progressIntervalMillis()
    {
        return own.get(ServiceKeys.PROGRESS_INTERVAL_MS_KEY);
    }

    /**
     * Whether pgsink copies the existing rows itself before streaming ({@code source.snapshot.mode=initial}, the
     * default).
     */
    public boolean copyLoad()
    {
        return copyLoad;
    }

    /** The initial load's settings. */
    public LoadSettings loadSettings()
    {
        SourceDatabase source = new SourceDatabase(debezium);
        LoadSettings.CaptureFilter filter = new LoadSettings.CaptureFilter()
        {
            @Override
            public boolean capturesTable(String schema, String table)
            {
                return capturedTables.captures(schema, table);
            }

            @Override
            public boolean capturesColumn(String schema, String table, String column)
            {
                return capturedTables.capturesColumn(schema, table, column);
            }

            @Override
            public boolean viaPartitionRoot()
            {
                return Boolean.parseBoolean(debezium.getOrDefault("publish.via.partition.root", "false"));
            }
        };
        return new LoadSettings(sink, source::connect, source.slotName(), source.publicationName(),
                source.publicationMode().getValue(), filter,
                sink.tableNameFormat()::targetOf,
                initialLoadParallelism(own.get(ServiceKeys.INITIAL_LOAD_PARALLELISM),
                        Runtime.getRuntime().availableProcessors()),
                own.get(ServiceKeys.INITIAL_LOAD_CHUNK_BYTES), own.get(ServiceKeys.INITIAL_LOAD_COPY_FORMAT),
                own.get(ServiceKeys.INITIAL_LOAD_PROGRESS_INTERVAL_MS), slotCreationTimeoutMillis(),
                source.failoverSlot());
    }

    /** {@code initial.load.parallelism}, where 0 means the processors, 2 to 4. */
    static int initialLoadParallelism(long configured, int processors)
    {
        return configured > 0 ? Math.toIntExact(configured) : Math.min(4, Math.max(2, processors));
    }

    public UnavailablePlaceholder unavailablePlaceholder()
    {
        return new UnavailablePlaceholder(debezium.getOrDefault("unavailable.value.placeholder",
                UnavailablePlaceholder.DEFAULT));
    }

    /** Source database name, for messages. */
    public String sourceDescription()
    {
        return debezium.getOrDefault("database.hostname", "?") + ":" + debezium.getOrDefault("database.port",
                "5432") + "/" + debezium.getOrDefault("database.dbname", "?");
    }

    /** The effective configuration, secrets masked and strings quoted, for logging once at start. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new TreeMap<>(sink.describe());
        described.putAll(own.describe());
        described.putAll(DebeziumProperties.describe(debezium, SOURCE_PREFIX));
        return described;
    }

    /** Logs the keys not at their default on one line at INFO, and every key at DEBUG. */
    public void log()
    {
        Map<String, String> described = describe();
        if (log.isInfoEnabled()) {
            Set<String> givenSecrets = new TreeSet<>();
            sink.targetPassword().ifPresent(password -> givenSecrets.add(SinkConfig.TARGET_PASSWORD));
            for (ConfigKey<?> key : KEYS) {
                if (key.secret() && !own.text(key).isEmpty()) {
                    givenSecrets.add(key.name());
                }
            }
            log.info("{} - configuration, the keys not at their default ({} keys in all, each logged at DEBUG): {}",
                    sink.sinkName(), described.size(), ConfigSummary.changed(described, givenSecrets));
        }
        if (log.isDebugEnabled()) {
            described.forEach((key, value) -> log.debug("{} - {} = {}", sink.sinkName(), key, value));
        }
    }

    @Override
    public String toString()
    {
        return describe().toString();
    }
}
