package io.pgsink.core.config.definition;

import java.util.Optional;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * A check of a parsed configuration value: a range, a prefix, anything the type alone does not
 * say. Returns the reason for users when the value is wrong. Implementations are stateless and
 * describe the values they accept in {@code toString()} (shown by Kafka Connect as valid values).
 */
@FunctionalInterface
public interface ConfigValidator<T>
{
    /** The reason {@code value} is wrong, empty when it is fine. */
    Optional<String> problem(T value);

    /** Every value is fine. */
    static <T> ConfigValidator<T> any()
    {
        return new Described<>("", value -> Optional.empty());
    }

    /** At least {@code min}: {@code must be zero or more}, {@code must be at least 1}. */
    static ConfigValidator<Long> atLeast(long min)
    {
        return new Described<>("[" + min + ",...]", value -> value >= min
                ? Optional.empty()
                : Optional.of(min == 0 ? "must be zero or more" : "must be at least " + min));
    }

    static ConfigValidator<Long> between(long min, long max)
    {
        return new Described<>("[" + min + ",...," + max + "]", value -> value >= min && value <= max
                ? Optional.empty()
                : Optional.of("must be between " + min + " and " + max));
    }

    /** Not empty, and not only white space: {@code must not be empty}. */
    static ConfigValidator<String> notBlank()
    {
        return new Described<>("non-empty string",
                value -> value.isBlank() ? Optional.of("must not be empty") : Optional.empty());
    }

    /** Not the empty string; {@code reason} says why it must not be. */
    static ConfigValidator<String> notEmpty(String reason)
    {
        requireNonNull(reason, "reason is null");
        return new Described<>("non-empty string", value -> value.isEmpty() ? Optional.of(reason) : Optional.empty());
    }

    /** This check, then {@code next} when this one passes. */
    default ConfigValidator<T> and(ConfigValidator<? super T> next)
    {
        requireNonNull(next, "next is null");
        ConfigValidator<T> first = this;
        return new Described<>(first.toString(), value -> {
            Optional<String> problem = first.problem(value);
            return problem.isPresent() ? problem : next.problem(value);
        });
    }

    /** A validator that says what it accepts. */
    record Described<T>(String description, Function<T, Optional<String>> check)
            implements ConfigValidator<T>
    {
        public Described
        {
            requireNonNull(description, "description is null");
            requireNonNull(check, "check is null");
        }

        @Override
        public Optional<String> problem(T value)
        {
            return check.apply(value);
        }

        @Override
        public String toString()
        {
            return description;
        }
    }
}
