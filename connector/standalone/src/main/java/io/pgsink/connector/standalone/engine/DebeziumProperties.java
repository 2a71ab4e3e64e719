package io.pgsink.connector.standalone.engine;

import io.debezium.config.Configuration;
import io.debezium.config.Field;
import io.debezium.connector.postgresql.PostgresConnector;
import io.debezium.connector.postgresql.PostgresConnectorConfig;
import io.debezium.embedded.async.AsyncEngineConfig;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.core.buffer.FlushPolicy;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigProblem;
import org.apache.kafka.common.config.ConfigDef;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code source.*} part of the standalone service's configuration: the Debezium PostgreSQL
 * connector and engine properties, with pgsink's defaults ({@link #DEFAULTS}) and the keys pgsink
 * owns ({@link #OWNED}), checked by Debezium's own validation and reported as
 * {@link ConfigProblem}s under their {@code source.} names.
 */
public final class DebeziumProperties
{
    /**
     * Debezium settings pgsink chooses unless the file sets them, and why: every conversion mode is
     * the lossless one, so each value reaches the target as PostgreSQL would print it.
     */
    public static final Map<String, String> DEFAULTS;

    /** The prefix of the Debezium keys in pgsink's configuration file. */
    public static final String SOURCE_PREFIX = "source.";

    /** Debezium settings the service owns: offsets live in the target, written with the data. */
    public static final Set<String> OWNED = Set.of("offset.storage", "offset.flush.interval.ms", "offset.commit.policy",
            "name");

    private static final String DATABASE_NAME = "database.dbname";
    /**
     * {@code source.*} keys that name something, with what: an empty one would fail late, in Debezium or the server.
     */
    private static final Map<String, String> NAMES = Map.of(
            "slot.name", "the replication slot",
            "publication.name", "the publication",
            "topic.prefix", "the source's logical server (Debezium's topic prefix, part of every stored position)",
            DATABASE_NAME, "the source database");

    /**
     * {@code source.*} keys Debezium (or the JDBC driver, or transformations) read that its field list does not name.
     */
    private static final List<String> PASS_THROUGH_PREFIXES = List.of(
            "database.", "driver.", "transforms", "predicates", "converters", "pgsinktext.", "signal.", "notification.",
                    "snapshot.", "heartbeat.", "errors.",
            "internal.", "key.converter", "value.converter", "header.converter", "post.processors", "topic.",
                    "custom.metric.tags", "schema.history.internal");

    static {
        Map<String, String> defaults = new LinkedHashMap<>();
        defaults.put("connector.class", PostgresConnector.class.getName());
        defaults.put("plugin.name", "pgoutput");
        // numeric as text: exact digits and scale, NaN and Infinity included (precise mode turns NaN into null)
        defaults.put("decimal.handling.mode", "string");
        // interval as ISO-8601 text (P1Y2M3DT4H5M6.78S), which PostgreSQL reads back exactly; numeric mode folds months
        // into 30.44 days
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
        // the __debezium.context.* headers (connector name, task) Debezium adds to every record: pgsink
        // reads none, and the consumer looks for the key-change headers among them
        defaults.put("extended.headers.enabled", "false");
        // bit strings and the array types Debezium cannot represent, as their PostgreSQL text
        defaults.put("converters", PostgresTextConverter.NAME);
        defaults.put(PostgresTextConverter.NAME + ".type", PostgresTextConverter.class.getName());
        DEFAULTS = defaults;
    }

    /**
     * The Debezium engine and connector properties: pgsink's defaults, the file's {@code source.*} keys, the keys
     * pgsink owns.
     */
    public static Map<String, String> of(Map<String, String> source, String sinkName, Optional<SinkConfig> sink,
            List<ConfigProblem> problems)
    {
        Map<String, String> debezium = new TreeMap<>();
        for (String owned : OWNED) {
            if (source.containsKey(owned)) {
                problems.add(ConfigProblem.invalid(SOURCE_PREFIX + owned, source.get(owned), false,
                        "pgsink owns it (offsets are stored in the target's offsets table, in the transaction that "
                                + "applies the data, and the engine is named after sink.name); remove it"));
            }
        }
        NAMES.forEach((key, what) -> {
            String value = source.get(key);
            if (value != null && value.isBlank()) {
                problems.add(ConfigProblem.invalid(SOURCE_PREFIX + key, value, false,
                        "must not be empty: it names " + what
                        + (key.equals(DATABASE_NAME) ? "" : "; remove the key for pgsink's default (from sink.name)")));
            }
        });
        String identifier = identifier(sinkName);
        debezium.put("name", sinkName);
        debezium.put("topic.prefix", identifier);
        debezium.put("slot.name", identifier);
        debezium.put("publication.name", identifier);
        debezium.putAll(DEFAULTS);
        if (sink.isPresent()) {
            FlushPolicy flushPolicy = sink.get().flushPolicy();
            // one engine batch is one flush: full batches under load, one poll interval's worth when quiet
            long batch = Math.max(1, Math.min(flushPolicy.maxEvents(), 100_000));
            debezium.put("max.batch.size", Long.toString(batch));
            // the engine's queue holds the next batch and a fifth more: records waiting in it outlive young
            // collections, which copy them (4 batches took pgsink's GC from about 3 to 7 us/event on a backlog,
            // docs/performance.md); while a pipelined flush applies, the next batch is read into it
            debezium.put("max.queue.size", Long.toString(batch + Math.max(1, batch / 5)));
            // buffer.max.bytes bounds the sink's buffer; the engine's queue of records waiting for the
            // next batch gets half that bound, so a burst of wide rows makes the source wait instead of
            // filling the heap
            debezium.put("max.queue.size.in.bytes", Long.toString(Math.max(1, flushPolicy.maxBytes() / 2)));
            debezium.put("poll.interval.ms", Long.toString(Math.max(10, flushPolicy.intervalMillis())));
        }
        for (Map.Entry<String, String> entry : source.entrySet()) {
            if (!OWNED.contains(entry.getKey())) {
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
        return debezium;
    }

    /**
     * What Debezium's own validation says of {@code debezium}, and {@code source.*} keys no one
     * knows. A key that has a problem in {@code found} already (a regular-expression list,
     * {@link CapturedTables}; an empty name) is not reported again in Debezium's words.
     */
    public static List<ConfigProblem> problems(Map<String, String> source, Map<String, String> debezium,
            List<ConfigProblem> found)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        Set<String> reported = new HashSet<>();
        for (ConfigProblem problem : found) {
            reported.add(problem.key());
        }
        Configuration configuration = Configuration.from(debezium);
        configuration.validate(PostgresConnectorConfig.ALL_FIELDS, (field, value, problem) -> {
            String key = SOURCE_PREFIX + field.name();
            if (reported.contains(key)) {
                // one problem per key: pgsink's words (a regular-expression list, an empty name) say it already
                return;
            }
            if (value == null) {
                problems.add(ConfigProblem.missing(key, problem));
            }
            else {
                boolean secret = isSecret(field.name()) || field.type() == ConfigDef.Type.PASSWORD;
                problems.add(ConfigProblem.invalid(key, String.valueOf(value), secret, problem));
            }
        });
        Set<String> known = PostgresConnectorConfig.ALL_FIELDS.with(AsyncEngineConfig.ALL_FIELDS).allFieldNames();
        List<String> converterNames = List.of(debezium.getOrDefault("converters", "").split(","));
        for (String key : source.keySet()) {
            boolean passThrough = PASS_THROUGH_PREFIXES.stream().anyMatch(key::startsWith)
                    || converterNames.stream().anyMatch(name -> !name.isBlank() && key.startsWith(name.trim() + "."));
            if (!known.contains(key) && !passThrough && !OWNED.contains(key)) {
                problems.add(ConfigProblem.unknown(SOURCE_PREFIX + key,
                        "not a setting of the Debezium PostgreSQL connector or engine"));
            }
        }
        if (!debezium.get("connector.class").equals(PostgresConnector.class.getName())) {
            problems.add(ConfigProblem.invalid(SOURCE_PREFIX + "connector.class",
                    debezium.get("connector.class"), false, "the standalone service reads PostgreSQL; use "
                    + PostgresConnector.class.getName()));
        }
        return problems;
    }

    static boolean isSecret(String key)
    {
        String lower = key.toLowerCase(Locale.ROOT);
        return lower.contains("password") || lower.contains("secret");
    }

    /** {@code debezium} as it may be logged, keys prefixed with {@code prefix}, secrets masked, values quoted. */
    public static Map<String, String> describe(Map<String, String> debezium, String prefix)
    {
        Map<String, String> described = new TreeMap<>();
        for (Map.Entry<String, String> entry : debezium.entrySet()) {
            Field field = PostgresConnectorConfig.ALL_FIELDS.fieldWithName(entry.getKey());
            boolean secret = isSecret(entry.getKey()) || (field != null && field.type() == ConfigDef.Type.PASSWORD);
            described.put(prefix + entry.getKey(),
                    secret ? ConfigProblem.MASKED : ConfigProblem.quoted(entry.getValue()));
        }
        return described;
    }

    private DebeziumProperties()
    {
    }

    /**
     * A name usable as a replication slot, publication and topic prefix: lower case letters, digits and underscores.
     */
    public static String identifier(String name)
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
}
