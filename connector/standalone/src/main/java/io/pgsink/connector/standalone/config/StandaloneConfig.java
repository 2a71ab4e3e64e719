package io.pgsink.connector.standalone.config;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.connector.standalone.engine.DebeziumProperties;
import io.pgsink.connector.standalone.engine.FlushBoundary;
import io.pgsink.connector.standalone.load.LoadFormat;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.connector.standalone.monitoring.HttpSecurity;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.SinkKeys;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValidator;
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
import java.util.Locale;
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
 * An environment variable {@code PGSINK_<KEY>} overrides key {@code <key>}: the name upper-cased,
 * with {@code .} and {@code -} as {@code _} ({@code PGSINK_TARGET_PASSWORD} sets
 * {@code target.password}, {@code PGSINK_SOURCE_DATABASE_HOSTNAME} sets
 * {@code source.database.hostname}). Every declared key ({@link #declaredKeys()}) can be set so,
 * and every key of the file. A variable that matches none of them becomes the key with {@code _}
 * read as {@code .} under {@code source.} and {@code target.jdbc.}, whose keys pgsink passes on
 * (Debezium's, the driver's). A variable in another of pgsink's namespaces
 * ({@link #ENVIRONMENT_NAMESPACES}, the first words of the declared keys) that names no key is a
 * configuration problem, as an unknown key in the file is: a misspelled variable would otherwise
 * be a setting silently not applied. {@code PGSINK_*} variables outside every namespace (the
 * tests' {@code PGSINK_TEST_JDBC_URL}, say) are not configuration: they are logged and ignored.
 */
public final class StandaloneConfig
{
    private static final Logger log = LoggerFactory.getLogger(StandaloneConfig.class);

    public static final String SOURCE_PREFIX = DebeziumProperties.SOURCE_PREFIX;
    public static final String ENVIRONMENT_PREFIX = "PGSINK_";
    /** Variables {@code PGSINK_TEST_*} belong to the test suite, never to the service. */
    private static final String TEST_NAMESPACE = "test.";
    /** Keys under these are passed on (Debezium's, the JDBC driver's): a variable in them needs no declared key. */
    static final List<String> PASS_THROUGH_NAMESPACES = List.of(SOURCE_PREFIX, SinkConfig.TARGET_JDBC_PREFIX);

    public static final String HTTP_PORT = "http.port";
    public static final String HTTP_HOST = "http.host";
    public static final String PROGRESS_INTERVAL_MS = "progress.interval.ms";
    public static final String SLOT_CREATION_TIMEOUT_MS = "slot.creation.timeout.ms";
    public static final String SLOT_CREATION_LOG_INTERVAL_MS = "slot.creation.log.interval.ms";
    /** The Debezium engine's bound on starting its task, which includes creating the slot. */
    static final String TASK_MANAGEMENT_TIMEOUT_MS = "internal.task.management.timeout.ms";

    static final ConfigKey<Long> HTTP_PORT_KEY = ConfigKey.optional(HTTP_PORT, ConfigType.LONG, 9464L,
            "Port of the HTTP endpoint serving /metrics (Prometheus text format) and /health; 0 picks a free port, -1 "
                    + "disables it.").withValidator(ConfigValidator.between(-1, 65535));
    static final ConfigKey<String> HTTP_HOST_KEY = ConfigKey.optional(HTTP_HOST, ConfigType.STRING, "127.0.0.1",
            "Address the HTTP endpoint listens on: the loopback interface by default; 0.0.0.0 for every interface "
                    + "(the Docker image sets it), with http.tls.* and http.auth.* where others can reach it.")
            .withValidator(ConfigValidator.notBlank());
    static final ConfigKey<Long> PROGRESS_INTERVAL_MS_KEY = ConfigKey.optional(PROGRESS_INTERVAL_MS, ConfigType.LONG,
            30_000L,
            "How often progress (events in, rows applied, lag, position) is logged while changes flow; 0 disables "
                    + "it.").withValidator(ConfigValidator.atLeast(0));

    static final ConfigKey<Long> SLOT_CREATION_TIMEOUT_MS_KEY = ConfigKey.optional(SLOT_CREATION_TIMEOUT_MS,
            ConfigType.LONG, 600_000L,
            "How long starting may wait for the replication slot to be created (PostgreSQL waits for every open "
                    + "transaction on the source to end); then the service stops, naming the transactions it waited "
                    + "for. Sets the Debezium engine's internal.task.management.timeout.ms unless "
                    + "source.internal.task.management.timeout.ms is given.")
            .withValidator(ConfigValidator.atLeast(1000));
    static final ConfigKey<Long> SLOT_CREATION_LOG_INTERVAL_MS_KEY = ConfigKey.optional(SLOT_CREATION_LOG_INTERVAL_MS,
            ConfigType.LONG, 10_000L,
            "While the replication slot is being created, how often the open source transactions it waits for (pid, "
                    + "xid, age) are logged.").withValidator(ConfigValidator.atLeast(100));

    static final ConfigKey<Long> INITIAL_LOAD_PARALLELISM = ConfigKey.optional("initial.load.parallelism",
            ConfigType.LONG, 0L,
            "How many chunks the initial load copies at once (one source and one target connection each); tables and "
                    + "chunks of large tables are loaded in parallel. "
                    + "0: as many as the JVM has processors, at least 2 and at most 4 (each chunk keeps a client "
                            + "thread and two server processes busy: "
                    + "on 2 cores, 2 at once copied 5% to 20% faster than 4).")
            .withValidator(ConfigValidator.between(0, 64));
    static final ConfigKey<Long> INITIAL_LOAD_CHUNK_BYTES = ConfigKey.optional("initial.load.chunk.bytes",
            ConfigType.LONG, 64L * 1024 * 1024,
            "The initial load splits a source table into chunks of this many bytes of heap (ctid ranges, PostgreSQL "
                    + "14+ sources), each copied and committed on its own.")
            .withValidator(ConfigValidator.atLeast(1024 * 1024));
    static final ConfigKey<LoadFormat> INITIAL_LOAD_COPY_FORMAT = ConfigKey.optional("initial.load.copy.format",
            ConfigType.choice(LoadFormat.class), LoadFormat.AUTO,
            "The COPY format of the initial load. binary: for tables whose columns all have built-in types, identical "
                    + "on both sides (others go as text). auto: binary as that, where source "
                    + "and target are PostgreSQL of the same major version, else text. text: always text.");
    static final ConfigKey<Long> INITIAL_LOAD_PROGRESS_INTERVAL_MS =
            ConfigKey.optional("initial.load.progress.interval.ms", ConfigType.LONG, 10_000L,
            "How often the initial load logs each loading table's rows, bytes, rate and estimated time left; 0 "
                    + "disables it.").withValidator(ConfigValidator.atLeast(0));

    public static final String FLUSH_BOUNDARY = "flush.boundary";
    static final ConfigKey<FlushBoundary> FLUSH_BOUNDARY_KEY = ConfigKey.optional(FLUSH_BOUNDARY,
            ConfigType.choice(FlushBoundary.class), FlushBoundary.BATCH,
            "Where a flush may end. transaction: only between source transactions, so every committed target state "
                    + "equals a committed source state (across tables); a transaction is applied whole "
                    + "whatever flush.max.events says, and one that alone takes buffer.max.bytes stops the service "
                            + "until buffer.max.bytes is raised. batch: at engine batch ends and when the buffer "
                    + "is full, which may show a source transaction partly applied until the next flush.");

    /** The service's own keys; the sink's are {@link SinkConfig#KEYS}. */
    public static final List<ConfigKey<?>> KEYS = List.of(FLUSH_BOUNDARY_KEY, HTTP_PORT_KEY, HTTP_HOST_KEY,
            PROGRESS_INTERVAL_MS_KEY, SLOT_CREATION_TIMEOUT_MS_KEY, SLOT_CREATION_LOG_INTERVAL_MS_KEY,
            INITIAL_LOAD_PARALLELISM, INITIAL_LOAD_CHUNK_BYTES, INITIAL_LOAD_COPY_FORMAT,
                    INITIAL_LOAD_PROGRESS_INTERVAL_MS,
            HttpSecurity.TLS_CERTIFICATE_FILE_KEY, HttpSecurity.TLS_KEY_FILE_KEY, HttpSecurity.AUTH_USERNAME_KEY,
            HttpSecurity.AUTH_PASSWORD_KEY, HttpSecurity.AUTH_BEARER_TOKEN_KEY);

    /**
     * The first words of every declared key, and the pass-through prefixes: where a
     * {@code PGSINK_*} variable is configuration. Derived, so that a new namespace cannot be
     * forgotten.
     */
    public static final List<String> ENVIRONMENT_NAMESPACES = namespaces();

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

    private static List<String> namespaces()
    {
        Set<String> namespaces = new TreeSet<>(PASS_THROUGH_NAMESPACES);
        for (ConfigKey<?> key : declaredKeys()) {
            namespaces.add(key.name().substring(0, key.name().indexOf('.') + 1));
        }
        return List.copyOf(namespaces);
    }

    /**
     * {@code properties} with the {@code PGSINK_*} variables of {@code environment} applied; a
     * variable in one of pgsink's namespaces that names no key is added to {@code problems}.
     */
    public static Map<String, String> withEnvironment(Map<String, String> properties, Map<String, String> environment,
            List<ConfigProblem> problems)
    {
        Map<String, String> byVariable = new TreeMap<>();
        for (ConfigKey<?> key : declaredKeys()) {
            byVariable.put(variableName(key.name()), key.name());
        }
        for (String key : properties.keySet()) {
            // the file's spelling wins: target.jdbc.ApplicationName keeps its case
            byVariable.put(variableName(key), key);
        }
        Map<String, String> result = new TreeMap<>(properties);
        for (Map.Entry<String, String> entry : new TreeMap<>(environment).entrySet()) {
            String variable = entry.getKey();
            if (!variable.startsWith(ENVIRONMENT_PREFIX) || variable.length() == ENVIRONMENT_PREFIX.length()) {
                continue;
            }
            String key = byVariable.get(variable);
            if (key == null) {
                String candidate = variable.substring(ENVIRONMENT_PREFIX.length()).toLowerCase(Locale.ROOT)
                        .replace('_', '.');
                if (PASS_THROUGH_NAMESPACES.stream().anyMatch(candidate::startsWith)) {
                    key = candidate;
                }
                else if (ENVIRONMENT_NAMESPACES.stream().anyMatch(candidate::startsWith)) {
                    problems.add(ConfigProblem.unknown(candidate, "environment variable " + variable
                            + " names no pgsink key (each key K is set by PGSINK_ and K upper-cased"
                            + " with . and - as _, e.g. " + variableName(SinkConfig.FLUSH_MAX_EVENTS)
                            + "); remove it or correct its name"));
                    continue;
                }
                else if (candidate.startsWith(TEST_NAMESPACE)) {
                    // the test suite's own variables (PGSINK_TEST_JDBC_URL, ...): not worth a warning
                    log.debug("environment variable {} is the test suite's, not pgsink configuration: ignored",
                            variable);
                    continue;
                }
                else {
                    log.warn("environment variable {} is not pgsink configuration (no pgsink key starts with {}): "
                            + "ignored", variable,
                            candidate.contains(".") ? candidate.substring(0, candidate.indexOf('.') + 1) : candidate);
                    continue;
                }
            }
            result.put(key, entry.getValue());
        }
        return result;
    }

    /** {@code target.password} → {@code PGSINK_TARGET_PASSWORD}. */
    public static String variableName(String key)
    {
        return ENVIRONMENT_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
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
        if (own.problems().isEmpty() && own.get(FLUSH_BOUNDARY_KEY) == FlushBoundary.TRANSACTION) {
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
        return engine != null ? Long.parseLong(engine) : own.get(SLOT_CREATION_TIMEOUT_MS_KEY);
    }

    public long slotCreationLogIntervalMillis()
    {
        return own.get(SLOT_CREATION_LOG_INTERVAL_MS_KEY);
    }

    /** Which source tables Debezium captures, from the include and exclude lists. */
    public CapturedTables capturedTables()
    {
        return capturedTables;
    }

    /** The port of the HTTP endpoint; 0 for any free port, -1 when disabled. */
    public int httpPort()
    {
        return Math.toIntExact(own.get(HTTP_PORT_KEY));
    }

    public String httpHost()
    {
        return own.get(HTTP_HOST_KEY);
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
        return own.get(FLUSH_BOUNDARY_KEY);
    }

    public long progressIntervalMillis()
    {
        return own.get(PROGRESS_INTERVAL_MS_KEY);
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
                initialLoadParallelism(own.get(INITIAL_LOAD_PARALLELISM), Runtime.getRuntime().availableProcessors()),
                        own.get(INITIAL_LOAD_CHUNK_BYTES), own.get(INITIAL_LOAD_COPY_FORMAT),
                own.get(INITIAL_LOAD_PROGRESS_INTERVAL_MS), slotCreationTimeoutMillis(), source.failoverSlot());
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
