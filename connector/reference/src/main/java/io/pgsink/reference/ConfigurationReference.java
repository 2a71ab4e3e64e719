package io.pgsink.reference;

import io.pgsink.connector.kafka.KafkaSinkConfig;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigType;
import org.apache.kafka.common.config.ConfigDef;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * docs/reference/configuration.md, generated from the key declarations: the sink's keys that both
 * adapters read ({@link SinkConfig#KEYS}), the standalone service's own ({@link StandaloneConfig#KEYS}),
 * and the Kafka Connect sink's configuration definition ({@link KafkaSinkConfig#CONFIG_DEF}) as Connect
 * shows and checks it. A key's documentation lives in its declaration only; this page follows it.
 */
public final class ConfigurationReference
{
    /** The page, relative to the repository root. */
    public static final Path FILE = Path.of("docs", "reference", "configuration.md");

    private static final Pattern OBJECT_TO_STRING = Pattern.compile("[\\w.$/]+@\\p{XDigit}+");
    private static final String INTRO = """
            One set of keys for every way pgsink runs: the [sink keys](#sink-keys) mean the same in the standalone
            service and in the Kafka Connect sink. Invalid settings are reported all at once, as
            `Invalid value <v> for configuration <key>: <reason>`; passwords are never logged.

            `target.jdbc.*` keys are handed to pgjdbc with the prefix removed, e.g. `target.jdbc.sslmode=verify-full`,
            `target.jdbc.sslrootcert=/etc/ssl/root.crt`: every TLS and driver option of pgjdbc is available
            ([Security](../guides/security.md)).

            ## Sink keys

            Read by both adapters ([standalone service](../guides/standalone-service.md),
            [Kafka Connect](../guides/kafka-connect.md)).

            """;
    private static final String STANDALONE = """

            ## Standalone service keys

            Read by `pgsink run` and `pgsink check` besides the sink keys. `source.*` keys go to Debezium with
            the prefix removed ([configuration file](../guides/standalone-service.md#configuration-file)).

            """;
    private static final String KAFKA_CONNECT = """

            ## Kafka Connect keys

            The connector's configuration definition, as Kafka Connect shows and validates it: the sink keys as the
            connector reads them, then its own. Connect's own keys (`topics`, `topics.regex`, converters,
            `transforms.*`, `errors.deadletterqueue.*`, `consumer.override.*`...) are Connect's.

            | key | type | default | valid values | importance | description |
            |---|---|---|---|---|---|
            """;
    private static final String TABLE_HEAD = """
            | key | type | default | valid values | description |
            |---|---|---|---|---|
            """;

    private ConfigurationReference()
    {
    }

    public static String generate()
    {
        StringBuilder page = new StringBuilder("# Configuration reference\n\n")
                .append(Regeneration.notice(ConfigurationReference.class, "ConfigurationReferenceTest"))
                .append(INTRO)
                .append(TABLE_HEAD);
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            page.append(row(key));
        }
        page.append(STANDALONE).append(TABLE_HEAD);
        for (ConfigKey<?> key : StandaloneConfig.KEYS) {
            page.append(row(key));
        }
        page.append(KAFKA_CONNECT);
        Map<String, String> shared = new HashMap<>();
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            shared.put(key.name(), key.documentation());
        }
        for (ConfigDef.ConfigKey key : KafkaSinkConfig.CONFIG_DEF.configKeys().values()) {
            String documentation = key.documentation.equals(shared.get(key.name))
                    ? "As in [sink keys](#sink-keys)."
                    : Markdown.cell(key.documentation);
            String validValues = key.validator == null ? "" : described(key.validator.toString());
            page.append("| ").append(Markdown.code(key.name))
                    .append(" | ").append(key.type.name().toLowerCase(Locale.ROOT))
                    .append(" | ").append(connectDefault(key))
                    .append(" | ").append(Markdown.cell(validValues))
                    .append(" | ").append(key.importance.name().toLowerCase(Locale.ROOT))
                    .append(" | ").append(documentation)
                    .append(" |\n");
        }
        return page.toString();
    }

    private static String row(ConfigKey<?> key)
    {
        String defaultValue = key.defaultValue()
                .map(value -> value.isEmpty() ? "(empty)" : Markdown.code(value))
                .orElse("(required)");
        return "| " + Markdown.code(key.name())
                + " | " + type(key)
                + " | " + defaultValue
                + " | " + Markdown.cell(validValues(key))
                + " | " + Markdown.cell(key.documentation())
                + " |\n";
    }

    private static String type(ConfigKey<?> key)
    {
        return key.secret() ? "password" : key.type().kind().name().toLowerCase(Locale.ROOT);
    }

    private static String validValues(ConfigKey<?> key)
    {
        List<String> choices = key.type().choices();
        if (!choices.isEmpty()) {
            return String.join(", ", choices);
        }
        return key.type().kind() == ConfigType.Kind.CHARACTER ? "one character" : described(key.validator().toString());
    }

    /**
     * What a validator says it accepts; nothing for one that does not say (a lambda's or Object's
     * {@code toString()}, which names a class and an identity that change from run to run).
     */
    static String described(String description)
    {
        return OBJECT_TO_STRING.matcher(description).matches() ? "" : description;
    }

    private static String connectDefault(ConfigDef.ConfigKey key)
    {
        if (!key.hasDefault()) {
            return "(required)";
        }
        String text = key.defaultValue == null ? "" : ConfigDef.convertToString(key.defaultValue, key.type);
        return text == null || text.isEmpty() ? "(empty)" : Markdown.code(text);
    }
}
