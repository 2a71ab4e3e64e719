package io.pgsink.core.config.definition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One configuration key: its name, type, default, validator and documentation, and whether it is
 * a secret. The sink's table is {@link io.pgsink.core.config.SinkConfig#KEYS}, each adapter has
 * one of its own; Kafka Connect's {@code ConfigDef} and the configuration reference
 * (docs/reference/configuration.md) are built from them, so a key is documented and checked in
 * exactly one place.
 *
 * <p>Reading a value parses it with the {@link ConfigType}, then checks it with the
 * {@link ConfigValidator}; either failing gives a {@link ConfigProblem} naming the key, the value
 * (masked for secrets) and the reason. The default is written as text, as a user would write it,
 * and must itself be valid.
 *
 * @param name dotted lower-case name, with a unit suffix where it has a unit ({@code .ms}, {@code .bytes})
 * @param type how the value is parsed
 * @param defaultValue the default as text, empty when the key is required
 * @param validator what else a parsed value must satisfy
 * @param secret never logged or echoed in error messages
 * @param documentation what the key does, for users
 */
public record ConfigKey<T>(String name, ConfigType<T> type, Optional<String> defaultValue,
        ConfigValidator<? super T> validator, boolean secret, String documentation)
{
    public ConfigKey
    {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        requireNonNull(defaultValue, "defaultValue is null");
        requireNonNull(validator, "validator is null");
        requireNonNull(documentation, "documentation is null");
        if (defaultValue.isPresent()) {
            Optional<String> reason;
            try {
                reason = validator.problem(type.parse(defaultValue.get()));
            }
            catch (IllegalArgumentException e) {
                reason = Optional.of(e.getMessage());
            }
            if (reason.isPresent()) {
                throw new IllegalArgumentException("The default '" + defaultValue.get() + "' of " + name
                        + " is invalid: " + reason.get());
            }
        }
    }

    public static <T> ConfigKey<T> required(String name, ConfigType<T> type, String documentation)
    {
        return new ConfigKey<>(name, type, Optional.empty(), ConfigValidator.any(), false, documentation);
    }

    public static <T> ConfigKey<T> optional(String name, ConfigType<T> type, T defaultValue, String documentation)
    {
        return new ConfigKey<>(name, type, Optional.of(type.format(defaultValue)), ConfigValidator.any(), false,
                documentation);
    }

    /** The names of {@code keys}, in order. */
    public static List<String> names(List<ConfigKey<?>> keys)
    {
        List<String> names = new ArrayList<>(keys.size());
        for (ConfigKey<?> key : keys) {
            names.add(key.name());
        }
        return names;
    }

    public ConfigKey<T> withValidator(ConfigValidator<? super T> validator)
    {
        return new ConfigKey<>(name, type, defaultValue, validator, secret, documentation);
    }

    /** This key, never logged nor echoed. */
    public ConfigKey<T> asSecret()
    {
        return new ConfigKey<>(name, type, defaultValue, validator, true, documentation);
    }

    /** This key as an adapter documents it (the same key read in the adapter's terms). */
    public ConfigKey<T> withDocumentation(String documentation)
    {
        return new ConfigKey<>(name, type, defaultValue, validator, secret, documentation);
    }

    public ConfigKey<T> withDefault(T defaultValue)
    {
        return new ConfigKey<>(name, type, Optional.of(type.format(defaultValue)), validator, secret, documentation);
    }

    /**
     * Parses and checks {@code text} as a value of this key.
     *
     * @throws IllegalArgumentException with the reason, for users (not naming key or value)
     */
    public T parse(String text)
    {
        T value = type.parse(text);
        Optional<String> problem = validator.problem(value);
        if (problem.isPresent()) {
            throw new IllegalArgumentException(problem.get());
        }
        return value;
    }

    /** What is wrong with {@code text} as a value of this key, if anything. */
    public Optional<ConfigProblem> check(String text)
    {
        try {
            parse(text);
            return Optional.empty();
        }
        catch (IllegalArgumentException e) {
            return Optional.of(ConfigProblem.invalid(name, text, secret, e.getMessage()));
        }
    }

    /**
     * The value of this key in {@code properties}, or its default when absent; empty after adding
     * to {@code problems} what is wrong (a missing required key, an invalid value).
     */
    public Optional<T> read(Map<String, String> properties, List<ConfigProblem> problems)
    {
        Optional<String> text = text(properties);
        if (text.isEmpty()) {
            problems.add(ConfigProblem.missing(name, documentation));
            return Optional.empty();
        }
        try {
            return Optional.of(parse(text.get()));
        }
        catch (IllegalArgumentException e) {
            problems.add(ConfigProblem.invalid(name, text.get(), secret, e.getMessage()));
            return Optional.empty();
        }
    }

    /** The text of this key in {@code properties}, or its default; empty when required and absent. */
    public Optional<String> text(Map<String, String> properties)
    {
        String text = properties.get(name);
        return text != null ? Optional.of(text) : defaultValue;
    }

    /** {@code text} as it may be shown: quoted, or masked for a secret. */
    public String shown(String text)
    {
        return secret ? ConfigProblem.MASKED : ConfigProblem.quoted(text);
    }
}
