package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.core.ConfigKey;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.TableNameFormat;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.pgsink.core.ConfigKey.Type.ENUM;
import static io.pgsink.core.ConfigKey.Type.LONG;
import static io.pgsink.core.ConfigKey.Type.STRING;
import static java.util.Objects.requireNonNull;

/**
 * The configuration of the Kafka Connect sink: the sink keys shared with the standalone service
 * ({@link SinkConfig#KEYS} and {@code target.jdbc.*}, same names, same meaning), a few keys of the
 * connector's own ({@link #KEYS}), and Kafka Connect's keys ({@code name}, {@code topics},
 * converters, {@code transforms.*}, {@code errors.*}...), which are Connect's business and ignored
 * here, except {@code errors.tolerance}, which Connect and pgsink read with the same meaning.
 *
 * <p>Two shared keys read a little differently: {@code sink.name} defaults to the connector's
 * {@code name}, and {@code target.table.name.format} also accepts {@code ${topic}} (see
 * {@link TableNameFormat}). Events reach the sink already routed, so the core sink is
 * configured with the identity format.
 *
 * <p>Immutable.
 */
public final class KafkaSinkConfig
{
    public static final String DELETE_ON_TOMBSTONE = "delete.on.tombstone";
    public static final String FLATTENED_METADATA_PREFIX = "flattened.metadata.prefix";
    public static final String UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder";
    public static final String RETRY_BACKOFF_MAX_MS = "retry.backoff.max.ms";

    /** The connector's own keys; the shared ones are {@link SinkConfig#KEYS}. */
    public static final List<ConfigKey> KEYS = List.of(
            ConfigKey.choice(DELETE_ON_TOMBSTONE, "false", List.of("false", "true"),
                    "Whether a tombstone (a record with a key, and neither value nor value schema) deletes the row of its key. "
                            + "true for records flattened by ExtractNewRecordState with delete.tombstone.handling.mode=delete-to-tombstone; "
                            + "false ignores tombstones: the ones Debezium writes after a delete event add nothing to it. "
                            + "Deletes flattened in the SMT's other modes (tombstone, rewrite) are applied either way."),
            ConfigKey.optional(FLATTENED_METADATA_PREFIX, STRING, "__",
                    "Fields of flattened records whose names start with this prefix are metadata (ExtractNewRecordState's add.fields.prefix), not columns: "
                            + "__deleted marks a delete, __op the operation, __source_schema and __source_table the source table."),
            ConfigKey.optional(UNAVAILABLE_VALUE_PLACEHOLDER, STRING, UnavailablePlaceholder.DEFAULT,
                    "The value Debezium sends for an unchanged TOASTed column (the source connector's unavailable.value.placeholder); pgsink fills such columns and never writes it."),
            ConfigKey.optional(RETRY_BACKOFF_MAX_MS, LONG, "30000",
                    "Longest wait between attempts when the target is unreachable; attempts start 500 ms apart and double."));

    /** How {@code sink.name} and {@code target.table.name.format} read in Kafka Connect. */
    private static final Map<String, String> CONNECT_DOCUMENTATION = Map.of(
            SinkConfig.SINK_NAME,
            "Name of this sink; empty (the default) for the connector's name. Positions (topic, partition and offset) are stored under it in the offsets table; "
                    + "the connector's tasks share it, as each partition is read by one task at a time.",
            SinkConfig.TARGET_TABLE_NAME_FORMAT,
            "Target table of a record: ${schema} and ${table} (or ${source.schema} and ${source.table}) are replaced by the source schema and table the record names, "
                    + "${topic} by its topic with '.' replaced by '_'. The first '.' outside a placeholder separates the target schema from the table name; "
                    + "without one, the target schema is the source schema, or public when the format uses ${topic}. "
                    + "Flattened records name their source table only with ExtractNewRecordState's add.fields=source.schema,source.table (or add.headers).");

    /** Kafka Connect's own keys, which it passes to connectors and tasks with theirs. */
    private static final Set<String> CONNECT_KEYS = Set.of(
            "name", "connector.class", "connector.plugin.version", "tasks.max", "tasks.max.enforce", "task.class", "topics", "topics.regex",
            "key.converter", "value.converter", "header.converter", "transforms", "predicates", "config.action.reload");
    private static final List<String> CONNECT_PREFIXES = List.of(
            "key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.",
            "consumer.override.", "producer.override.", "admin.override.", "errors.");
    private static final String CONNECTOR_NAME = "name";
    private static final String GROUP = "pgsink";
    private static final String IDENTITY_FORMAT = "${schema}.${table}";
    private static final Pattern PROBLEM_KEY = Pattern.compile("configuration ([^\\s:]+)|from ([^\\s=]+)=");

    public static final ConfigDef CONFIG_DEF = configDef();

    private final SinkConfig sink;
    private final TableNameFormat routing;
    private final boolean deleteOnTombstone;
    private final String metadataPrefix;
    private final UnavailablePlaceholder placeholder;
    private final long retryBackoffMaxMillis;

    private KafkaSinkConfig(SinkConfig sink, TableNameFormat routing, boolean deleteOnTombstone, String metadataPrefix, UnavailablePlaceholder placeholder, long retryBackoffMaxMillis)
    {
        this.sink = requireNonNull(sink, "sink is null");
        this.routing = requireNonNull(routing, "routing is null");
        this.deleteOnTombstone = deleteOnTombstone;
        this.metadataPrefix = requireNonNull(metadataPrefix, "metadataPrefix is null");
        this.placeholder = requireNonNull(placeholder, "placeholder is null");
        this.retryBackoffMaxMillis = retryBackoffMaxMillis;
    }

    /** One problem with the configuration, and the key it is about. */
    record Problem(String key, String message)
    {
        Problem
        {
            requireNonNull(key, "key is null");
            requireNonNull(message, "message is null");
        }
    }

    /**
     * Parses and validates a connector (or task) configuration.
     *
     * @throws ConfigException listing every problem, one per line, as
     *         {@code Invalid value <v> for configuration <key>: <reason>}
     */
    public static KafkaSinkConfig parse(Map<String, String> properties)
    {
        List<Problem> problems = new ArrayList<>();
        KafkaSinkConfig config = parse(properties, problems);
        if (!problems.isEmpty()) {
            List<String> messages = new ArrayList<>();
            for (Problem problem : problems) {
                messages.add(problem.message());
            }
            throw new ConfigException("Invalid pgsink connector configuration (" + problems.size() + (problems.size() == 1 ? " problem" : " problems") + "):\n  "
                    + String.join("\n  ", messages));
        }
        return config;
    }

    /** Every problem of the configuration; empty when it is valid. */
    static List<Problem> problems(Map<String, String> properties)
    {
        List<Problem> problems = new ArrayList<>();
        parse(properties, problems);
        return problems;
    }

    /** Returns the configuration, or null when {@code problems} got any. */
    private static KafkaSinkConfig parse(Map<String, String> properties, List<Problem> problems)
    {
        requireNonNull(properties, "properties is null");
        Map<String, String> sinkProperties = new TreeMap<>();
        Map<String, String> own = new HashMap<>();
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String key = entry.getKey();
            if (entry.getValue() == null || isConnectKey(key)) {
                continue;
            }
            if (isOwnKey(key)) {
                own.put(key, entry.getValue());
            }
            else if (isSinkKey(key)) {
                sinkProperties.put(key, entry.getValue());
            }
            else {
                problems.add(new Problem(key, "Unknown configuration " + key + ": not a setting of pgsink (" + String.join(", ", knownKeys()) + ", "
                        + SinkConfig.TARGET_JDBC_PREFIX + "*) nor of Kafka Connect"));
            }
        }

        String sinkName = sinkProperties.get(SinkConfig.SINK_NAME);
        if (sinkName == null || sinkName.isEmpty()) {
            String connectorName = properties.get(CONNECTOR_NAME);
            if (connectorName != null && !connectorName.isBlank()) {
                sinkProperties.put(SinkConfig.SINK_NAME, connectorName);
            }
            else {
                sinkProperties.remove(SinkConfig.SINK_NAME);
            }
        }

        String format = sinkProperties.getOrDefault(SinkConfig.TARGET_TABLE_NAME_FORMAT, defaultOf(SinkConfig.TARGET_TABLE_NAME_FORMAT));
        TableNameFormat routing = null;
        try {
            routing = TableNameFormat.parse(format);
        }
        catch (IllegalArgumentException e) {
            problems.add(new Problem(SinkConfig.TARGET_TABLE_NAME_FORMAT, invalid(format, SinkConfig.TARGET_TABLE_NAME_FORMAT, e.getMessage())));
        }
        // events reach the sink routed already
        sinkProperties.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, IDENTITY_FORMAT);

        List<String> sinkProblems = SinkConfig.problems(sinkProperties);
        for (String problem : sinkProblems) {
            problems.add(new Problem(keyOf(problem), problem));
        }
        SinkConfig sink = sinkProblems.isEmpty() ? SinkConfig.parse(sinkProperties) : null;

        String deleteOnTombstone = own.getOrDefault(DELETE_ON_TOMBSTONE, defaultOf(DELETE_ON_TOMBSTONE));
        if (!deleteOnTombstone.equals("true") && !deleteOnTombstone.equals("false")) {
            problems.add(new Problem(DELETE_ON_TOMBSTONE, invalid(deleteOnTombstone, DELETE_ON_TOMBSTONE, "must be one of false, true")));
        }
        String prefix = own.getOrDefault(FLATTENED_METADATA_PREFIX, defaultOf(FLATTENED_METADATA_PREFIX));
        if (prefix.isEmpty()) {
            problems.add(new Problem(FLATTENED_METADATA_PREFIX, invalid(prefix, FLATTENED_METADATA_PREFIX, "must not be empty: every field would be metadata")));
        }
        String placeholderText = own.getOrDefault(UNAVAILABLE_VALUE_PLACEHOLDER, defaultOf(UNAVAILABLE_VALUE_PLACEHOLDER));
        if (placeholderText.isEmpty()) {
            problems.add(new Problem(UNAVAILABLE_VALUE_PLACEHOLDER, invalid(placeholderText, UNAVAILABLE_VALUE_PLACEHOLDER, "must not be empty")));
        }
        String backoffText = own.getOrDefault(RETRY_BACKOFF_MAX_MS, defaultOf(RETRY_BACKOFF_MAX_MS));
        long backoff = -1;
        try {
            backoff = Long.parseLong(backoffText.trim());
            if (backoff < 1) {
                problems.add(new Problem(RETRY_BACKOFF_MAX_MS, invalid(backoffText, RETRY_BACKOFF_MAX_MS, "must be at least 1")));
            }
        }
        catch (NumberFormatException e) {
            problems.add(new Problem(RETRY_BACKOFF_MAX_MS, invalid(backoffText, RETRY_BACKOFF_MAX_MS, "not a whole number")));
        }

        if (!problems.isEmpty()) {
            return null;
        }
        return new KafkaSinkConfig(sink, routing, deleteOnTombstone.equals("true"), prefix, new UnavailablePlaceholder(placeholderText), backoff);
    }

    private static String invalid(String value, String key, String reason)
    {
        return "Invalid value '" + value + "' for configuration " + key + ": " + reason;
    }

    /** The key a problem line of {@link SinkConfig#parse} is about. */
    private static String keyOf(String problem)
    {
        Matcher matcher = PROBLEM_KEY.matcher(problem);
        if (matcher.find()) {
            return matcher.group(1) != null ? matcher.group(1) : matcher.group(2);
        }
        return SinkConfig.TARGET_URL;
    }

    static boolean isConnectKey(String key)
    {
        if (CONNECT_KEYS.contains(key)) {
            return true;
        }
        if (key.equals(SinkConfig.ERRORS_TOLERANCE) || key.equals(SinkConfig.ERRORS_DEAD_LETTER_TABLE)) {
            return false;
        }
        for (String prefix : CONNECT_PREFIXES) {
            if (key.startsWith(prefix)) {
                return true;
            }
        }
        return key.endsWith(".plugin.version") && (key.startsWith("key.converter") || key.startsWith("value.converter") || key.startsWith("header.converter"));
    }

    private static boolean isOwnKey(String key)
    {
        for (ConfigKey configKey : KEYS) {
            if (configKey.name().equals(key)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isSinkKey(String key)
    {
        if (key.startsWith(SinkConfig.TARGET_JDBC_PREFIX) && key.length() > SinkConfig.TARGET_JDBC_PREFIX.length()) {
            return true;
        }
        for (ConfigKey configKey : SinkConfig.KEYS) {
            if (configKey.name().equals(key)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> knownKeys()
    {
        List<String> names = new ArrayList<>();
        for (ConfigKey key : SinkConfig.KEYS) {
            names.add(key.name());
        }
        for (ConfigKey key : KEYS) {
            names.add(key.name());
        }
        return names;
    }

    private static String defaultOf(String name)
    {
        for (ConfigKey key : SinkConfig.KEYS) {
            if (key.name().equals(name)) {
                return key.defaultValue().orElseThrow();
            }
        }
        for (ConfigKey key : KEYS) {
            if (key.name().equals(name)) {
                return key.defaultValue().orElseThrow();
            }
        }
        throw new IllegalArgumentException("no key " + name);
    }

    /** Every key of {@link SinkConfig#KEYS} and {@link #KEYS}, documented, typed and validated as Kafka Connect shows them. */
    private static ConfigDef configDef()
    {
        ConfigDef definition = new ConfigDef();
        int order = 0;
        for (ConfigKey key : SinkConfig.KEYS) {
            define(definition, key, ++order);
        }
        for (ConfigKey key : KEYS) {
            define(definition, key, ++order);
        }
        return definition;
    }

    private static void define(ConfigDef definition, ConfigKey key, int order)
    {
        String documentation = CONNECT_DOCUMENTATION.getOrDefault(key.name(), key.documentation());
        Object defaultValue = key.name().equals(SinkConfig.SINK_NAME) ? "" : key.defaultValue().orElse(null);
        ConfigDef.Type type = switch (key.type()) {
            case STRING, CHARACTER, ENUM -> ConfigDef.Type.STRING;
            case PASSWORD -> ConfigDef.Type.PASSWORD;
            case LONG -> ConfigDef.Type.LONG;
        };
        ConfigDef.Validator validator = null;
        if (key.type() == ENUM) {
            validator = ConfigDef.ValidString.in(key.allowedValues().toArray(new String[0]));
        }
        else if (key.type() == LONG) {
            validator = ConfigDef.Range.atLeast(key.name().endsWith(".ms") ? 0 : 1);
            if (defaultValue != null) {
                defaultValue = Long.parseLong((String) defaultValue);
            }
        }
        ConfigDef.Importance importance = key.defaultValue().isEmpty() || key.name().startsWith("target.") ? ConfigDef.Importance.HIGH : ConfigDef.Importance.MEDIUM;
        definition.define(key.name(), type, defaultValue == null ? ConfigDef.NO_DEFAULT_VALUE : defaultValue, validator, importance, documentation,
                GROUP, order, ConfigDef.Width.MEDIUM, key.name());
    }

    /** The core sink's configuration, with the identity routing format. */
    public SinkConfig sink()
    {
        return sink;
    }

    public String sinkName()
    {
        return sink.sinkName();
    }

    TableNameFormat routing()
    {
        return routing;
    }

    public boolean deleteOnTombstone()
    {
        return deleteOnTombstone;
    }

    public String metadataPrefix()
    {
        return metadataPrefix;
    }

    public UnavailablePlaceholder placeholder()
    {
        return placeholder;
    }

    public long retryBackoffMaxMillis()
    {
        return retryBackoffMaxMillis;
    }

    /** The effective configuration, secrets masked, for logging once. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new LinkedHashMap<>(sink.describe());
        described.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, "'" + routing + "'");
        described.put(DELETE_ON_TOMBSTONE, "'" + deleteOnTombstone + "'");
        described.put(FLATTENED_METADATA_PREFIX, "'" + metadataPrefix + "'");
        described.put(UNAVAILABLE_VALUE_PLACEHOLDER, "'" + placeholder.text() + "'");
        described.put(RETRY_BACKOFF_MAX_MS, "'" + retryBackoffMaxMillis + "'");
        return described;
    }
}
