package io.pgsink.core;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One configuration key: its name, type, default, allowed values and documentation. The whole
 * table is {@link SinkConfig#KEYS}; the Kafka Connect {@code ConfigDef} and the README's reference
 * are generated from it, so a key is documented exactly once.
 *
 * @param name dotted lower-case name, with a unit suffix where it has a unit ({@code .ms}, {@code .bytes})
 * @param type how the value is parsed
 * @param defaultValue the default, empty when the key is required
 * @param allowedValues for {@link Type#ENUM}, the accepted values (lower case)
 * @param secret never logged or echoed in error messages
 * @param documentation what the key does, for users
 */
public record ConfigKey(String name, Type type, Optional<String> defaultValue, List<String> allowedValues, boolean secret, String documentation)
{
    public enum Type
    {
        STRING,
        LONG,
        CHARACTER,
        ENUM,
        PASSWORD,
    }

    public ConfigKey
    {
        requireNonNull(name, "name is null");
        requireNonNull(type, "type is null");
        requireNonNull(defaultValue, "defaultValue is null");
        allowedValues = List.copyOf(requireNonNull(allowedValues, "allowedValues is null"));
        requireNonNull(documentation, "documentation is null");
    }

    public static ConfigKey required(String name, Type type, String documentation)
    {
        return new ConfigKey(name, type, Optional.empty(), List.of(), type == Type.PASSWORD, documentation);
    }

    public static ConfigKey optional(String name, Type type, String defaultValue, String documentation)
    {
        return new ConfigKey(name, type, Optional.of(defaultValue), List.of(), type == Type.PASSWORD, documentation);
    }

    public static ConfigKey choice(String name, String defaultValue, List<String> allowedValues, String documentation)
    {
        return new ConfigKey(name, Type.ENUM, Optional.of(defaultValue), allowedValues, false, documentation);
    }
}
