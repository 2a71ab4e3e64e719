package io.pgsink.connector.standalone;

import io.debezium.config.Configuration;
import io.debezium.config.Field;
import io.debezium.connector.postgresql.PostgresConnector;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.debezium.embedded.async.AsyncEngineConfig;
import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.core.ConfigKey;
import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import org.apache.kafka.common.config.ConfigDef;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;

import static io.pgsink.core.ConfigKey.Type.LONG;
import static io.pgsink.core.ConfigKey.Type.STRING;
import static java.util.Objects.requireNonNull;

/**
 * The standalone service's configuration: one properties file, environment variables on top, split
 * into three parts and validated all at once.
 * <ul>
 * <li>{@code source.*}: the Debezium PostgreSQL connector and engine, prefix removed. pgsink fills
 *     in {@link #SOURCE_DEFAULTS} (lossless conversions, pgoutput, truncates captured...) unless the
 *     file sets them, and owns the offset storage ({@link #SOURCE_OWNED}).</li>
 * <li>{@link #KEYS}: the service's own keys (HTTP endpoint, progress logging, retries).</li>
 * <li>everything else: the sink ({@link SinkConfig#KEYS} and {@code target.jdbc.*}).</li>
 * </ul>
 * An environment variable {@code PGSINK_<KEY>} overrides key {@code <key>}: the name upper-cased,
 * with {@code .} and {@code -} as {@code _} ({@code PGSINK_TARGET_PASSWORD} sets
 * {@code target.password}, {@code PGSINK_SOURCE_DATABASE_HOSTNAME} sets
 * {@code source.database.hostname}). A variable that matches no key of the file becomes the key
 * with {@code _} read as {@code .}, when that key is in one of pgsink's namespaces
 * ({@link #ENVIRONMENT_NAMESPACES}); other {@code PGSINK_*} variables are not configuration.
 */
public final class StandaloneConfig
{
    private static final Logger log = LoggerFactory.getLogger(StandaloneConfig.class);

    public static final String SOURCE_PREFIX = "source.";
    public static final String ENVIRONMENT_PREFIX = "PGSINK_";
    public static final List<String> ENVIRONMENT_NAMESPACES = List.of("source.", "target.", "sink.", "flush.", "buffer.", "copy.", "offsets.", "tables.", "schema.", "errors.", "http.", "progress.", "retry.");

    public static final String HTTP_PORT = "http.port";
    public static final String HTTP_HOST = "http.host";
    public static final String PROGRESS_INTERVAL_MS = "progress.interval.ms";
    public static final String RETRY_BACKOFF_MAX_MS = "retry.backoff.max.ms";

    public static final List<ConfigKey> KEYS = List.of(
            new ConfigKey(HTTP_PORT, LONG, Optional.of("9464"), List.of(), false, "Port of the HTTP endpoint serving /metrics (Prometheus text format) and /health; 0 picks a free port, -1 disables it."),
            new ConfigKey(HTTP_HOST, STRING, Optional.of("0.0.0.0"), List.of(), false, "Address the HTTP endpoint listens on."),
            new ConfigKey(PROGRESS_INTERVAL_MS, LONG, Optional.of("30000"), List.of(), false, "How often progress (events in, rows applied, lag, position) is logged while changes flow; 0 disables it."),
            new ConfigKey(RETRY_BACKOFF_MAX_MS, LONG, Optional.of("30000"), List.of(), false, "Longest wait between attempts when the target is unreachable; attempts start 500 ms apart and double."));

    /**
     * Debezium settings pgsink chooses unless the file sets them, and why: every conversion mode is
     * the lossless one, so each value reaches the target as PostgreSQL would print it.
     */
    static final Map<String, String> SOURCE_DEFAULTS;

    /** Debezium settings the service owns: offsets live in the target, written with the data. */
    static final Set<String> SOURCE_OWNED = Set.of("offset.storage", "offset.flush.interval.ms", "offset.commit.policy", "name");

    /** {@code source.*} keys Debezium (or the JDBC driver, or transformations) read that its field list does not name. */
    private static final List<String> SOURCE_PASS_THROUGH_PREFIXES = List.of(
            "database.", "driver.", "transforms", "predicates", "converters", "pgsinktext.", "signal.", "notification.", "snapshot.", "heartbeat.", "errors.",
            "internal.", "key.converter", "value.converter", "header.converter", "post.processors", "topic.", "custom.metric.tags", "schema.history.internal");

    static {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("connector.class", PostgresConnector.class.getName());
        defaults.put("plugin.name", "pgoutput");
        // numeric as text: exact digits and scale, NaN and Infinity included (precise mode turns NaN into null)
        defaults.put("decimal.handling.mode", "string");
        // interval as ISO-8601 text (P1Y2M3DT4H5M6.78S), which PostgreSQL reads back exactly; numeric mode folds months into 30.44 days
        defaults.put("interval.handling.mode", "string");
        // hstore as a map, written back as hstore text; json mode would hand an hstore column JSON it cannot parse
        defaults.put("hstore.handling.mode", "map");
        // microsecond precision for time and timestamp (connect mode truncates to milliseconds)
        defaults.put("time.precision.mode", "adaptive");
        defaults.put("binary.handling.mode", "bytes");
        // Debezium skips truncates by default; pgsink applies them
        defaults.put("skipped.operations", "none");
        // source column types, for creating target tables and for bit strings
        defaults.put("column.propagate.source.type", ".*");
        // types Debezium has no converter for (box, path, pg_lsn...) arrive as their text instead of being dropped
        defaults.put("include.unknown.datatypes", "true");
        // deletes are enough; a tombstone would only be skipped
        defaults.put("tombstones.on.delete", "false");
        // keeps the slot's confirmed position moving when captured tables are quiet but others are not
        defaults.put("heartbeat.interval.ms", "10000");
        // bit strings and the array types Debezium cannot represent, as their PostgreSQL text
        defaults.put("converters", PostgresTextConverter.NAME);
        defaults.put(PostgresTextConverter.NAME + ".type", PostgresTextConverter.class.getName());
        SOURCE_DEFAULTS = defaults;
    }

    private final SinkConfig sink;
    private final Map<String, String> debezium;
    private final int httpPort;
    private final String httpHost;
    private final long progressIntervalMillis;
    private final long retryBackoffMaxMillis;

    private StandaloneConfig(SinkConfig sink, Map<String, String> debezium, int httpPort, String httpHost, long progressIntervalMillis, long retryBackoffMaxMillis)
    {
        this.sink = sink;
        this.debezium = debezium;
        this.httpPort = httpPort;
        this.httpHost = httpHost;
        this.progressIntervalMillis = progressIntervalMillis;
        this.retryBackoffMaxMillis = retryBackoffMaxMillis;
    }

    /**
     * Reads {@code file} and applies {@code environment} overrides.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) when the file cannot be read or the configuration is invalid
     */
    public static StandaloneConfig load(Path file, Map<String, String> environment)
    {
        return parse(withEnvironment(read(file), environment));
    }

    static Map<String, String> read(Path file)
    {
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            properties.load(reader);
        }
        catch (IOException e) {
            throw new SinkException(ErrorCode.CONFIG, "Cannot read configuration file " + file.toAbsolutePath() + ": " + e, e);
        }
        Map<String, String> values = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            values.put(name.trim(), properties.getProperty(name).trim());
        }
        return values;
    }

    /** {@code properties} with the {@code PGSINK_*} variables of {@code environment} applied. */
    public static Map<String, String> withEnvironment(Map<String, String> properties, Map<String, String> environment)
    {
        Map<String, String> byVariable = new TreeMap<>();
        for (String key : properties.keySet()) {
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
                key = variable.substring(ENVIRONMENT_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
                String candidate = key;
                if (ENVIRONMENT_NAMESPACES.stream().noneMatch(candidate::startsWith)) {
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
     * Splits and validates {@code properties} (file keys, environment already applied).
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) naming every problem of every part, one per line
     */
    public static StandaloneConfig parse(Map<String, String> properties)
    {
        requireNonNull(properties, "properties is null");
        List<String> problems = new ArrayList<>();
        Map<String, String> source = new TreeMap<>();
        Map<String, String> own = new TreeMap<>();
        Map<String, String> sinkProperties = new TreeMap<>();
        for (Map.Entry<String, String> entry : properties.entrySet()) {
            String key = entry.getKey();
            if (key.startsWith(SOURCE_PREFIX)) {
                source.put(key.substring(SOURCE_PREFIX.length()), entry.getValue());
            }
            else if (KEYS.stream().anyMatch(configKey -> configKey.name().equals(key))) {
                own.put(key, entry.getValue());
            }
            else {
                sinkProperties.put(key, entry.getValue());
            }
        }

        SinkConfig sink = null;
        try {
            sink = SinkConfig.parse(sinkProperties);
        }
        catch (SinkException e) {
            if (e.errorCode() != ErrorCode.CONFIG) {
                throw e;
            }
            problems.addAll(problemLines(e.getMessage()));
        }

        long httpPort = longValue(own, HTTP_PORT, -1, 65535, problems);
        String httpHost = value(own, HTTP_HOST);
        if (httpHost.isBlank()) {
            problems.add("Invalid value '" + httpHost + "' for configuration " + HTTP_HOST + ": must not be empty");
        }
        long progressInterval = longValue(own, PROGRESS_INTERVAL_MS, 0, Long.MAX_VALUE, problems);
        long retryBackoffMax = longValue(own, RETRY_BACKOFF_MAX_MS, 1, Long.MAX_VALUE, problems);

        String sinkName = sink != null ? sink.sinkName() : sinkProperties.getOrDefault(SinkConfig.SINK_NAME, "pgsink");
        Map<String, String> debezium = debeziumProperties(source, sinkName, sink, problems);

        // Debezium validates some fields once per field that depends on them
        problems = new ArrayList<>(new LinkedHashSet<>(problems));
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, "Invalid pgsink configuration (" + problems.size() + (problems.size() == 1 ? " problem" : " problems") + "):\n  " + String.join("\n  ", problems));
        }
        return new StandaloneConfig(sink, debezium, (int) httpPort, httpHost, progressInterval, retryBackoffMax);
    }

    private static Map<String, String> debeziumProperties(Map<String, String> source, String sinkName, SinkConfig sink, List<String> problems)
    {
        Map<String, String> debezium = new TreeMap<>();
        for (String owned : SOURCE_OWNED) {
            if (source.containsKey(owned)) {
                problems.add("Invalid value " + quoted(source.get(owned)) + " for configuration " + SOURCE_PREFIX + owned
                        + ": pgsink owns it (offsets are stored in the target's offsets table, in the transaction that applies the data, and the engine is named after sink.name); remove it");
            }
        }
        String identifier = identifier(sinkName);
        debezium.put("name", sinkName);
        debezium.put("topic.prefix", identifier);
        debezium.put("slot.name", identifier);
        debezium.put("publication.name", identifier);
        debezium.putAll(SOURCE_DEFAULTS);
        if (sink != null) {
            // one engine batch is one flush: full batches under load, one poll interval's worth when quiet
            long batch = Math.max(1, Math.min(sink.flushPolicy().maxEvents(), 100_000));
            debezium.put("max.batch.size", Long.toString(batch));
            debezium.put("max.queue.size", Long.toString(batch * 4));
            // buffer.max.bytes bounds the sink's buffer; the engine's queue of records waiting for the
            // next batch gets the same bound, so a burst of wide rows makes the source wait instead of
            // filling the heap
            debezium.put("max.queue.size.in.bytes", Long.toString(sink.flushPolicy().maxBytes()));
            debezium.put("poll.interval.ms", Long.toString(Math.max(10, sink.flushPolicy().intervalMillis())));
        }
        for (Map.Entry<String, String> entry : source.entrySet()) {
            if (!SOURCE_OWNED.contains(entry.getKey())) {
                debezium.put(entry.getKey(), entry.getValue());
            }
        }
        if (source.containsKey("converters") && !source.get("converters").contains(PostgresTextConverter.NAME)) {
            // the user's converters come first, so they win for the columns they claim
            debezium.put("converters", source.get("converters") + "," + PostgresTextConverter.NAME);
        }
        String placeholder = debezium.get("unavailable.value.placeholder");
        if (placeholder != null) {
            debezium.put(PostgresTextConverter.NAME + "." + PostgresTextConverter.PLACEHOLDER_PROPERTY, placeholder);
        }
        debezium.put("offset.storage", TargetOffsetBackingStore.class.getName());
        debezium.put("offset.flush.interval.ms", "0");

        Configuration configuration = Configuration.from(debezium);
        configuration.validate(PostgresConnectorConfig.ALL_FIELDS, (field, value, problem) -> {
            if (value == null) {
                problems.add("Missing required configuration " + SOURCE_PREFIX + field.name() + ": " + problem);
            }
            else {
                boolean secret = isSecret(field.name()) || field.type() == ConfigDef.Type.PASSWORD;
                problems.add("Invalid value " + (secret ? "<masked>" : quoted(String.valueOf(value))) + " for configuration " + SOURCE_PREFIX + field.name() + ": " + problem);
            }
        });
        Set<String> known = PostgresConnectorConfig.ALL_FIELDS.with(AsyncEngineConfig.ALL_FIELDS).allFieldNames();
        List<String> converterNames = List.of(debezium.getOrDefault("converters", "").split(","));
        for (String key : source.keySet()) {
            boolean passThrough = SOURCE_PASS_THROUGH_PREFIXES.stream().anyMatch(key::startsWith)
                    || converterNames.stream().anyMatch(name -> !name.isBlank() && key.startsWith(name.trim() + "."));
            if (!known.contains(key) && !passThrough && !SOURCE_OWNED.contains(key)) {
                problems.add("Unknown configuration " + SOURCE_PREFIX + key + ": not a setting of the Debezium PostgreSQL connector or engine");
            }
        }
        if (!debezium.get("connector.class").equals(PostgresConnector.class.getName())) {
            problems.add("Invalid value " + quoted(debezium.get("connector.class")) + " for configuration " + SOURCE_PREFIX + "connector.class: the standalone service reads PostgreSQL; use "
                    + PostgresConnector.class.getName());
        }
        return debezium;
    }

    /** A name usable as a replication slot, publication and topic prefix: lower case letters, digits and underscores. */
    static String identifier(String name)
    {
        StringBuilder identifier = new StringBuilder();
        for (char c : name.toLowerCase(Locale.ROOT).toCharArray()) {
            identifier.append((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c : '_');
        }
        if (identifier.length() == 0 || identifier.charAt(0) >= '0' && identifier.charAt(0) <= '9') {
            identifier.insert(0, "pgsink_");
        }
        return identifier.length() > 63 ? identifier.substring(0, 63) : identifier.toString();
    }

    private static List<String> problemLines(String message)
    {
        List<String> lines = new ArrayList<>();
        String[] parts = message.split("\n");
        for (int i = 1; i < parts.length; i++) {
            lines.add(parts[i].strip());
        }
        if (lines.isEmpty()) {
            lines.add(message);
        }
        return lines;
    }

    private static String value(Map<String, String> own, String key)
    {
        String value = own.get(key);
        if (value != null) {
            return value;
        }
        return KEYS.stream().filter(configKey -> configKey.name().equals(key)).findFirst().orElseThrow().defaultValue().orElseThrow();
    }

    private static long longValue(Map<String, String> own, String key, long min, long max, List<String> problems)
    {
        String value = value(own, key);
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed < min || parsed > max) {
                problems.add("Invalid value " + quoted(value) + " for configuration " + key + ": must be between " + min + " and " + max);
                return min;
            }
            return parsed;
        }
        catch (NumberFormatException e) {
            problems.add("Invalid value " + quoted(value) + " for configuration " + key + ": not a whole number");
            return min;
        }
    }

    static boolean isSecret(String key)
    {
        String lower = key.toLowerCase(Locale.ROOT);
        return lower.contains("password") || lower.contains("secret");
    }

    private static String quoted(String value)
    {
        return "'" + value + "'";
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
        return properties;
    }

    /** The port of the HTTP endpoint; 0 for any free port, -1 when disabled. */
    public int httpPort()
    {
        return httpPort;
    }

    public String httpHost()
    {
        return httpHost;
    }

    public long progressIntervalMillis()
    {
        return progressIntervalMillis;
    }

    public long retryBackoffMaxMillis()
    {
        return retryBackoffMaxMillis;
    }

    public UnavailablePlaceholder unavailablePlaceholder()
    {
        return new UnavailablePlaceholder(debezium.getOrDefault("unavailable.value.placeholder", UnavailablePlaceholder.DEFAULT));
    }

    /** Source database name, for messages. */
    public String sourceDescription()
    {
        return debezium.getOrDefault("database.hostname", "?") + ":" + debezium.getOrDefault("database.port", "5432") + "/" + debezium.getOrDefault("database.dbname", "?");
    }

    /** The effective configuration, secrets masked and strings quoted, for logging once at start. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new TreeMap<>(sink.describe());
        described.put(HTTP_PORT, Integer.toString(httpPort));
        described.put(HTTP_HOST, quoted(httpHost));
        described.put(PROGRESS_INTERVAL_MS, Long.toString(progressIntervalMillis));
        described.put(RETRY_BACKOFF_MAX_MS, Long.toString(retryBackoffMaxMillis));
        for (Map.Entry<String, String> entry : debezium.entrySet()) {
            Field field = PostgresConnectorConfig.ALL_FIELDS.fieldWithName(entry.getKey());
            boolean secret = isSecret(entry.getKey()) || (field != null && field.type() == ConfigDef.Type.PASSWORD);
            described.put(SOURCE_PREFIX + entry.getKey(), secret ? "<masked>" : quoted(entry.getValue()));
        }
        return described;
    }

    public void log()
    {
        if (log.isInfoEnabled()) {
            describe().forEach((key, value) -> log.info("{} - {} = {}", sink.sinkName(), key, value));
        }
    }

    @Override
    public String toString()
    {
        return describe().toString();
    }
}
