package io.pgsink.core.config.definition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * One problem with a configuration, and the key it is about: what validation returns, so that an
 * adapter can attach it to its key (Kafka Connect's {@code validate}) or list it with the others
 * (the standalone service, {@code pgsink check}) without taking message text apart. Never holds a
 * secret: the value is kept as shown, {@code <masked>} for secrets.
 *
 * @param kind what is wrong
 * @param key the key the problem is about; for {@link Kind#COMBINATION}, the first of the keys
 * @param value the value as shown to users: quoted, or {@code <masked>} for a secret; for
 *         {@link Kind#COMBINATION}, what the keys make together and their values; empty for a
 *         missing key, and for an unknown one, whose value may be a secret under a misspelled name
 * @param reason why, for users
 */
public record ConfigProblem(Kind kind, String key, Optional<String> value, String reason)
{
    public enum Kind
    {
        /** The value cannot be parsed or is out of range. */
        INVALID,
        /** A required key has no value. */
        MISSING,
        /** No one knows the key. */
        UNKNOWN,
        /** Values valid on their own that do not go together. */
        COMBINATION,
    }

    public static final String MASKED = "<masked>";

    public ConfigProblem
    {
        requireNonNull(kind, "kind is null");
        requireNonNull(key, "key is null");
        requireNonNull(value, "value is null");
        requireNonNull(reason, "reason is null");
    }

    /** {@code text} of {@code key} is invalid; a secret's text is not kept. */
    public static ConfigProblem invalid(String key, String text, boolean secret, String reason)
    {
        return new ConfigProblem(Kind.INVALID, key, Optional.of(secret ? MASKED : quoted(text)), reason);
    }

    public static ConfigProblem missing(String key, String reason)
    {
        return new ConfigProblem(Kind.MISSING, key, Optional.empty(), reason);
    }

    public static ConfigProblem unknown(String key, String reason)
    {
        return new ConfigProblem(Kind.UNKNOWN, key, Optional.empty(), reason);
    }

    /**
     * Values of several keys, each valid, that do not go together; attached to the first key.
     *
     * @param what what the keys make together, e.g. {@code COPY format}
     * @param shownValues each key, in order, with its value as shown ({@link #quoted} or {@link #MASKED})
     */
    public static ConfigProblem combination(String what, Map<String, String> shownValues, String reason)
    {
        if (shownValues.isEmpty()) {
            throw new IllegalArgumentException("a combination needs keys");
        }
        List<String> settings = new ArrayList<>(shownValues.size());
        shownValues.forEach((key, shown) -> settings.add(key + "=" + shown));
        return new ConfigProblem(Kind.COMBINATION, shownValues.keySet().iterator().next(),
                Optional.of(what + " from " + String.join(", ", settings)), reason);
    }

    public static String quoted(String text)
    {
        return "'" + text + "'";
    }

    /** The problem as users read it, in Kafka's words ({@code Invalid value 'x' for configuration k: reason}). */
    public String message()
    {
        return switch (kind) {
            case INVALID -> "Invalid value " + value.orElseThrow() + " for configuration " + key + ": " + reason;
            case MISSING -> "Missing required configuration " + key + ": " + reason;
            case UNKNOWN -> "Unknown configuration " + key + ": " + reason;
            case COMBINATION -> "Invalid " + value.orElseThrow() + ": " + reason;
        };
    }

    /**
     * Every problem, one per line, under a headline that counts them: what configuration errors
     * read like wherever they are reported.
     */
    public static String describe(String headline, List<ConfigProblem> problems)
    {
        List<String> lines = new ArrayList<>(problems.size());
        for (ConfigProblem problem : problems) {
            lines.add(problem.message());
        }
        return headline + " (" + problems.size() + (problems.size() == 1 ? " problem" : " problems") + "):\n  "
                + String.join("\n  ", lines);
    }

    /**
     * What a validation gave, when it found no problem; otherwise {@code failure} of every
     * problem, one per line, under {@code headline} (see {@link #describe}).
     */
    public static <T> T valueOrThrow(Optional<T> value, List<ConfigProblem> problems, String headline,
            Function<String, ? extends RuntimeException> failure)
    {
        if (!problems.isEmpty()) {
            throw failure.apply(describe(headline, problems));
        }
        return value.orElseThrow();
    }

    @Override
    public String toString()
    {
        return message();
    }
}
