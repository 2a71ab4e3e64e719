package io.pgsink.core.config.definition;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The values of a table of {@link ConfigKey}s read from properties, each parsed and checked, and
 * the problems of those that are not valid. Keys outside the table are the caller's business
 * (which keys are unknown depends on the adapter). Immutable.
 */
public final class ConfigValues
{
    private final Map<String, ConfigKey<?>> keys;
    private final Map<String, Object> values;
    private final Map<String, String> texts;
    private final List<ConfigProblem> problems;

    private ConfigValues(List<ConfigKey<?>> keys, Map<String, Object> values, Map<String, String> texts,
            List<ConfigProblem> problems)
    {
        Map<String, ConfigKey<?>> byName = new LinkedHashMap<>();
        for (ConfigKey<?> key : keys) {
            if (byName.put(key.name(), key) != null) {
                throw new IllegalArgumentException("Key " + key.name() + " is in the table twice");
            }
        }
        this.keys = Collections.unmodifiableMap(byName);
        this.values = Map.copyOf(values);
        this.texts = Map.copyOf(texts);
        this.problems = List.copyOf(problems);
    }

    /** Reads every key of {@code keys} from {@code properties}, in the order of {@code keys}. */
    public static ConfigValues read(List<ConfigKey<?>> keys, Map<String, String> properties)
    {
        requireNonNull(keys, "keys is null");
        requireNonNull(properties, "properties is null");
        Map<String, Object> values = new HashMap<>();
        Map<String, String> texts = new HashMap<>();
        List<ConfigProblem> problems = new ArrayList<>();
        for (ConfigKey<?> key : keys) {
            Optional<?> value = key.read(properties, problems);
            if (value.isPresent()) {
                values.put(key.name(), value.get());
                texts.put(key.name(), key.text(properties).orElseThrow());
            }
        }
        return new ConfigValues(keys, values, texts, problems);
    }

    /** The problems of the keys read, in key order; empty when every value is valid. */
    public List<ConfigProblem> problems()
    {
        return problems;
    }

    public boolean isValid(ConfigKey<?> key)
    {
        return values.containsKey(key.name());
    }

    /**
     * @throws IllegalStateException when {@code key} was not read or its value is not valid
     */
    public <T> T get(ConfigKey<T> key)
    {
        Object value = values.get(key.name());
        // the very key read, not one of another table with the same name and maybe another type
        if (value == null || keys.get(key.name()) != key) {
            throw new IllegalStateException("No valid value of " + key.name() + " was read");
        }
        @SuppressWarnings("unchecked")
        T typed = (T) value;
        return typed;
    }

    /** The text {@code key}'s value was read from (its default when absent). */
    public String text(ConfigKey<?> key)
    {
        get(key);
        return texts.get(key.name());
    }

    /** The valid values as they may be logged, by key in table order: quoted, secrets {@code <masked>}. */
    public Map<String, String> describe()
    {
        Map<String, String> described = new LinkedHashMap<>();
        for (ConfigKey<?> key : keys.values()) {
            String text = texts.get(key.name());
            if (text != null) {
                described.put(key.name(), key.shown(text));
            }
        }
        return described;
    }
}
