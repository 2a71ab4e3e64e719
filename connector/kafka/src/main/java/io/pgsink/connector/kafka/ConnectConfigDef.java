package io.pgsink.connector.kafka;

import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import org.jetbrains.annotations.Nullable;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * Kafka Connect's view of pgsink's key tables: a {@link ConfigDef} with each key's type, default,
 * documentation and validator taken from its {@link ConfigKey}, so that Connect shows and checks
 * exactly what pgsink reads.
 *
 * <p>Connect parses a value by the {@link ConfigDef.Type} first and reports a value it cannot parse
 * itself; the validator then sees only parsed values, and passes on a value Connect could not
 * parse (null), which already has its one problem. pgsink's validator reports the problem in
 * pgsink's words ({@link ConfigProblem#message()}), the same text {@link KafkaSinkConfig#parse}
 * gives.
 */
final class ConnectConfigDef
{
    private static final String GROUP = "pgsink";

    private ConnectConfigDef()
    {
    }

    static ConfigDef of(List<ConfigKey<?>> keys)
    {
        ConfigDef definition = new ConfigDef();
        int order = 0;
        for (ConfigKey<?> key : keys) {
            define(definition, key, ++order);
        }
        return definition;
    }

    private static void define(ConfigDef definition, ConfigKey<?> key, int order)
    {
        ConfigDef.Type type = switch (key.type().kind()) {
            case LONG -> ConfigDef.Type.LONG;
            // Connect's BOOLEAN would also take TRUE and " true", which pgsink refuses: one reading for both
            case STRING, CHARACTER, CHOICE, BOOLEAN -> ConfigDef.Type.STRING;
        };
        if (key.secret()) {
            type = ConfigDef.Type.PASSWORD;
        }
        Object defaultValue = ConfigDef.NO_DEFAULT_VALUE;
        if (key.defaultValue().isPresent()) {
            defaultValue = type == ConfigDef.Type.LONG ? key.type().parse(key.defaultValue().get())
                    : key.defaultValue().get();
        }
        ConfigDef.Importance importance = key.defaultValue().isEmpty() || key.name().startsWith("target.")
                ? ConfigDef.Importance.HIGH : ConfigDef.Importance.MEDIUM;
        definition.define(key.name(), type, defaultValue, new Validator(key), importance, key.documentation(), GROUP,
                order, ConfigDef.Width.MEDIUM, key.name());
    }

    /** A key's own check, on the value as Connect parsed it. */
    private record Validator(ConfigKey<?> key)
            implements ConfigDef.Validator
    {
        Validator
        {
            requireNonNull(key, "key is null");
        }

        @Override
        public void ensureValid(String name, @Nullable Object value)
        {
            if (value == null) {
                // Connect could not parse it, or it is missing: Connect reported that already
                return;
            }
            String text = value instanceof Password password ? password.value() : value.toString();
            Optional<ConfigProblem> problem = key.check(text);
            if (problem.isPresent()) {
                throw new ConfigException(problem.get().message());
            }
        }

        @Override
        public String toString()
        {
            if (!key.type().choices().isEmpty()) {
                return "[" + String.join(", ", key.type().choices()) + "]";
            }
            return key.validator().toString();
        }
    }
}
