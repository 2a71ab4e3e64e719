package io.pgsink.connector.kafka;

import io.pgsink.connector.debezium.UnavailablePlaceholder;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.SinkKeys;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.config.definition.ConfigType;
import io.pgsink.core.config.definition.ConfigValidator;
import io.pgsink.core.config.definition.ConfigValues;
import io.pgsink.core.mapping.TableNameFormat;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

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
 * {@link TableNameFormat}). Events reach the sink already routed, so the core sink is configured
 * with the identity format.
 *
 * <p>Validation is the keys' own ({@link ConfigKey}): {@link #problems} gives every problem with
 * its key, and {@link #CONFIG_DEF}, which Connect shows and checks per key, is built from the same
 * tables ({@link ConnectConfigDef}).
 *
 * <p>Immutable.
 */
public final class KafkaSinkConfig
{
    public static final String DELETE_ON_TOMBSTONE = "delete.on.tombstone";
    public static final String FLATTENED_METADATA_PREFIX = "flattened.metadata.prefix";
    public static final String UNAVAILABLE_VALUE_PLACEHOLDER = "unavailable.value.placeholder";
    public static final String KEY_CHANGE_WAIT_MS = "key.change.wait.ms";
    public static final String RECORD_FORMAT = "record.format";

    static final ConfigKey<Boolean> DELETE_ON_TOMBSTONE_KEY = ConfigKey.optional(DELETE_ON_TOMBSTONE,
            ConfigType.BOOLEAN, false,
            "Whether a tombstone (a record with a key, and neither value nor value schema) deletes the row of its key. "
            + "true for records flattened by ExtractNewRecordState with "
            + "delete.tombstone.handling.mode=delete-to-tombstone; false ignores tombstones: the ones Debezium writes "
            + "after a delete event add nothing to it. Deletes flattened in the SMT's other modes (tombstone, rewrite) "
            + "are applied either way.");
    static final ConfigKey<String> FLATTENED_METADATA_PREFIX_KEY = ConfigKey.optional(FLATTENED_METADATA_PREFIX,
                    ConfigType.STRING, "__",
                    "Fields of flattened records whose names start with this prefix are metadata "
                    + "(ExtractNewRecordState's add.fields.prefix), not columns: __deleted marks a delete, __op the "
                    + "operation, __source_schema and __source_table the source table.")
            .withValidator(ConfigValidator.notEmpty("must not be empty: every field would be metadata"));
    static final ConfigKey<String> UNAVAILABLE_VALUE_PLACEHOLDER_KEY = ConfigKey.optional(
                    UNAVAILABLE_VALUE_PLACEHOLDER, ConfigType.STRING, UnavailablePlaceholder.DEFAULT,
                    "The value Debezium sends for an unchanged TOASTed column (the source connector's "
                    + "unavailable.value.placeholder); pgsink fills such columns and never writes it.")
            .withValidator(ConfigValidator.notEmpty("must not be empty"));

    static final ConfigKey<Long> KEY_CHANGE_WAIT_MS_KEY = ConfigKey.optional(KEY_CHANGE_WAIT_MS,
                    ConfigType.LONG, 30_000L,
                    "How long the create of a primary-key change (Debezium's create with header __debezium.oldkey) "
                    + "whose unchanged TOASTed columns carry the placeholder waits for the old row, which the flush of "
                    + "the change's delete (header __debezium.newkey) saves in the table pgsink_moved_rows, in "
                    + "whichever task and partition it comes. While it waits, its partition waits (the others go on); "
                    + "it normally waits until the other partition's task flushes. When the time passes, the create is "
                    + "applied filled from the old key's row in the target if there is one (a WARN names table and key "
                    + "columns); 0 does not wait. Deletes are never held back.")
            .withValidator(ConfigValidator.atLeast(0));

    static final ConfigKey<RecordFormat> RECORD_FORMAT_KEY = ConfigKey.optional(RECORD_FORMAT,
            ConfigType.choice(RecordFormat.class), RecordFormat.CONNECT,
            "How the task reads record keys and values. connect: as the worker's key.converter and value.converter "
            + "deliver them (JsonConverter with schemas.enable=true, Avro...). debezium-json: the records are Debezium "
            + "change events written by JsonConverter with schemas.enable=true ({\"schema\":...,\"payload\":...}), the "
            + "converters are org.apache.kafka.connect.converters.ByteArrayConverter (or StringConverter), and pgsink "
            + "reads the JSON itself, faster than JsonConverter (no JSON tree, each distinct schema interpreted once); "
            + "Single Message Transforms that need structs cannot run on the sink side then.");

    /** The connector's own keys; the shared ones are {@link SinkConfig#KEYS}. */
    public static final List<ConfigKey<?>> KEYS = List.of(DELETE_ON_TOMBSTONE_KEY, FLATTENED_METADATA_PREFIX_KEY,
            UNAVAILABLE_VALUE_PLACEHOLDER_KEY, KEY_CHANGE_WAIT_MS_KEY, RECORD_FORMAT_KEY);
    /** The converters that hand a task the bytes (or text) of a record as they are. */
    static final List<String> RAW_CONVERTERS = List.of("org.apache.kafka.connect.converters.ByteArrayConverter",
            "org.apache.kafka.connect.storage.StringConverter");

    /** {@code sink.name} as Kafka Connect reads it: empty (the default) for the connector's name. */
    static final ConfigKey<String> SINK_NAME_KEY = SinkKeys.SINK_NAME.withDefault("").withDocumentation(
            "Name of this sink; empty (the default) for the connector's name. Positions (topic, partition and offset) "
            + "are stored under it in the offsets table; the connector's tasks share it, as each partition is read by "
            + "one task at a time.");

    /** {@code target.table.name.format} as Kafka Connect reads it: routing by topic too. */
    static final ConfigKey<TableNameFormat> ROUTING_KEY =
            SinkKeys.TARGET_TABLE_NAME_FORMAT.withValidator(ConfigValidator.any()).withDocumentation(
            "Target table of a record: ${schema} and ${table} (or ${source.schema} and ${source.table}) are replaced "
            + "by the source schema and table the record names, ${topic} by its topic with '.' replaced by '_'. The "
            + "first '.' outside a placeholder separates the target schema from the table name; without one, the "
            + "target schema is the source schema, or public when the format uses ${topic}. Flattened records name "
            + "their source table only with ExtractNewRecordState's add.fields=source.schema,source.table (or "
            + "add.headers).");

    /** The shared keys as Kafka Connect reads them, then the connector's own: what Connect shows and checks. */
    static final List<ConfigKey<?>> CONNECT_KEYS;

    static {
        List<ConfigKey<?>> keys = new ArrayList<>();
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            keys.add(key.name().equals(SinkConfig.SINK_NAME) ? SINK_NAME_KEY
                    : key.name().equals(SinkConfig.TARGET_TABLE_NAME_FORMAT) ? ROUTING_KEY : key);
        }
        keys.addAll(KEYS);
        CONNECT_KEYS = List.copyOf(keys);
    }

    /** Kafka Connect's own keys, which it passes to connectors and tasks with theirs. */
    private static final Set<String> CONNECT_OWN_KEYS = Set.of(
            "name", "connector.class", "connector.plugin.version", "tasks.max", "tasks.max.enforce", "task.class",
            "topics", "topics.regex",
            "key.converter", "value.converter", "header.converter", "transforms", "predicates", "config.action.reload");
    private static final List<String> CONNECT_PREFIXES = List.of(
            "key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.",
            "consumer.override.", "producer.override.", "admin.override.", "errors.");
    private static final String CONNECTOR_NAME = "name";
    private static final String JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter";
    private static final String REPLACE_NULL_WITH_DEFAULT = "value.converter.replace.null.with.default";
    private static final String IDENTITY_FORMAT = "${schema}.${table}";

    public static final ConfigDef CONFIG_DEF = ConnectConfigDef.of(CONNECT_KEYS);

    private final SinkConfig sink;
    private final TableNameFormat routing;
    private final ConfigValues own;
    private final UnavailablePlaceholder placeholder;

    private KafkaSinkConfig(SinkConfig sink, TableNameFormat routing, ConfigValues own)
    {
        this.sink = requireNonNull(sink, "sink is null");
        this.routing = requireNonNull(routing, "routing is null");
        this.own = requireNonNull(own, "own is null");
        this.placeholder = new UnavailablePlaceholder(own.get(UNAVAILABLE_VALUE_PLACEHOLDER_KEY));
    }

    /**
     * Parses and validates a connector (or task) configuration.
     *
     * @throws ConfigException listing every problem, one per line, as
     *         {@code Invalid value <v> for configuration <key>: <reason>}
     */
    public static KafkaSinkConfig parse(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        return ConfigProblem.valueOrThrow(validate(properties, problems), problems,
                "Invalid pgsink connector configuration", ConfigException::new);
    }

    /** Every problem of the configuration, each with its key; empty when it is valid. */
    static List<ConfigProblem> problems(Map<String, String> properties)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        validate(properties, problems);
        return problems;
    }

    /** Returns the configuration, or empty when {@code problems} got any. */
    private static Optional<KafkaSinkConfig> validate(Map<String, String> properties, List<ConfigProblem> problems)
    {
        requireNonNull(properties, "properties is null");
        Map<String, String> sinkProperties = new TreeMap<>();
        Map<String, String> ownProperties = new HashMap<>();
        for (Map.Entry<String, String> entry : new TreeMap<>(properties).entrySet()) {
            String key = entry.getKey();
            if (entry.getValue() == null || isConnectKey(key)) {
                continue;
            }
            if (ConfigKey.names(KEYS).contains(key)) {
                ownProperties.put(key, entry.getValue());
            }
            else if (SinkConfig.isSinkKey(key)
                    || (key.startsWith(SinkConfig.TARGET_JDBC_PREFIX)
                            && key.length() > SinkConfig.TARGET_JDBC_PREFIX.length())) {
                sinkProperties.put(key, entry.getValue());
            }
            else {
                problems.add(ConfigProblem.unknown(key, "not a setting of pgsink ("
                        + String.join(", ", ConfigKey.names(CONNECT_KEYS)) + ", "
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

        Optional<TableNameFormat> routing = ROUTING_KEY.read(sinkProperties, problems);
        // events reach the sink routed already
        sinkProperties.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, IDENTITY_FORMAT);
        Optional<SinkConfig> sink = SinkConfig.validate(sinkProperties, problems);

        ConfigValues own = ConfigValues.read(KEYS, ownProperties);
        problems.addAll(own.problems());
        if (own.problems().isEmpty() && own.get(RECORD_FORMAT_KEY) == RecordFormat.DEBEZIUM_JSON) {
            for (String converter : List.of("key.converter", "value.converter")) {
                String value = properties.get(converter);
                if (value != null && !RAW_CONVERTERS.contains(value.trim())) {
                    problems.add(ConfigProblem.invalid(converter, value, false, RECORD_FORMAT
                            + "=debezium-json reads the bytes of the records itself: the converter must be "
                            + String.join(" or ", RAW_CONVERTERS)));
                }
            }
        }

        if (own.problems().isEmpty() && own.get(RECORD_FORMAT_KEY) == RecordFormat.CONNECT) {
            checkNullsStayNull(properties, problems);
        }

        if (!problems.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new KafkaSinkConfig(sink.orElseThrow(), routing.orElseThrow(), own));
    }

    /**
     * JsonConverter reads a JSON {@code null} of a field whose schema has a default (Debezium puts
     * each column's default there) as that default unless {@code replace.null.with.default=false}
     * (Kafka 3.5+): a NULL the source holds would be written as the column's default. A connector
     * naming JsonConverter must turn that off; the worker's converter, which a connector does not
     * see, is for docs/guides/kafka-connect.md to explain.
     */
    private static void checkNullsStayNull(Map<String, String> properties, List<ConfigProblem> problems)
    {
        String converter = properties.get("value.converter");
        if (converter == null || !converter.trim().equals(JSON_CONVERTER)) {
            return;
        }
        String replace = properties.get(REPLACE_NULL_WITH_DEFAULT);
        String reason = "must be false with " + JSON_CONVERTER + ", which otherwise reads a NULL of a column that has "
                + "a default as the default (Kafka 3.5+; "
                + "set it on the source connector's value.converter too, where JsonConverter writes the default in "
                + "place of the NULL)";
        if (replace == null) {
            problems.add(ConfigProblem.missing(REPLACE_NULL_WITH_DEFAULT, reason));
        }
        else if (!replace.trim().equalsIgnoreCase("false")) {
            problems.add(ConfigProblem.invalid(REPLACE_NULL_WITH_DEFAULT, replace, false, reason));
        }
    }

    static boolean isConnectKey(String key)
    {
        if (CONNECT_OWN_KEYS.contains(key)) {
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
        return key.endsWith(".plugin.version")
                && (key.startsWith("key.converter") || key.startsWith("value.converter")
                        || key.startsWith("header.converter"));
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
        return own.get(DELETE_ON_TOMBSTONE_KEY);
    }

    public String metadataPrefix()
    {
        return own.get(FLATTENED_METADATA_PREFIX_KEY);
    }

    public UnavailablePlaceholder placeholder()
    {
        return placeholder;
    }

    /** {@code key.change.wait.ms}: how long the delete of a key change waits for its create; 0 does not wait. */
    public long keyChangeWaitMillis()
    {
        return own.get(KEY_CHANGE_WAIT_MS_KEY);
    }

    /** {@code record.format}: whether the task reads Debezium's JSON itself. */
    public RecordFormat recordFormat()
    {
        return own.get(RECORD_FORMAT_KEY);
    }

    /** The effective configuration, secrets masked, for logging once. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new LinkedHashMap<>(sink.describe());
        described.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, ConfigProblem.quoted(routing.toString()));
        described.putAll(own.describe());
        return described;
    }
}
