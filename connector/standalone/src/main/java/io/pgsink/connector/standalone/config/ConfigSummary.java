package io.pgsink.connector.standalone.config;

import io.pgsink.connector.standalone.engine.DebeziumProperties;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The start's one line about the configuration: the keys whose values differ from pgsink's
 * defaults (a key's documented default, pgsink's Debezium defaults), as
 * {@link StandaloneConfig#describe} shows them (secrets {@code <masked>}). Every key is logged at
 * DEBUG.
 */
final class ConfigSummary
{
    private ConfigSummary() {}

    /**
     * The entries of {@code described} (a {@link StandaloneConfig#describe}) that are not at their
     * default; a secret, masked either way, when it is one of {@code givenSecrets}.
     */
    static Map<String, String> changed(Map<String, String> described, Set<String> givenSecrets)
    {
        Map<String, String> defaults = new TreeMap<>();
        List<ConfigKey<?>> keys = new ArrayList<>(SinkConfig.KEYS);
        keys.addAll(StandaloneConfig.KEYS);
        for (ConfigKey<?> key : keys) {
            key.defaultValue().ifPresent(text -> defaults.put(key.name(), key.shown(text)));
        }
        defaults.putAll(DebeziumProperties.describe(DebeziumProperties.DEFAULTS, StandaloneConfig.SOURCE_PREFIX));
        for (String owned : DebeziumProperties.OWNED) {
            // set by pgsink whatever the file says: not the user's to change
            String key = StandaloneConfig.SOURCE_PREFIX + owned;
            defaults.put(key, described.getOrDefault(key, ""));
        }
        Map<String, String> changed = new TreeMap<>();
        described.forEach((key, value) -> {
            if (!value.equals(defaults.get(key)) || givenSecrets.contains(key)) {
                changed.put(key, value);
            }
        });
        return changed;
    }
}
