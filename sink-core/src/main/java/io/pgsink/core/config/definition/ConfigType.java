package io.pgsink.core.config.definition;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * How the text of a configuration value becomes a value of type {@code T}, and back. Parsing
 * throws {@link IllegalArgumentException} whose message is the reason, for users
 * ({@code not a whole number}); range and other checks on the parsed value are a key's
 * {@link ConfigValidator}.
 *
 * <p>Choices are enums: {@link #choice} reads the constant's name in lower case with {@code -} for
 * {@code _} ({@code ADD_COLUMNS} is {@code add-columns}), exactly as written, no other spelling.
 *
 * @param kind how the value is represented outside pgsink (Kafka Connect's {@code ConfigDef})
 * @param parser text to value; throws {@link IllegalArgumentException} with the reason
 * @param formatter value to text, such that parsing it gives the value back
 * @param choices the accepted texts, for {@link Kind#CHOICE} and {@link Kind#BOOLEAN}; otherwise empty
 */
public record ConfigType<T>(Kind kind, Function<String, T> parser, Function<? super T, String> formatter,
        List<String> choices)
{
    public enum Kind
    {
        /** Any text. */
        STRING,
        /** A whole number, {@code long}. */
        LONG,
        /** {@code true} or {@code false}. */
        BOOLEAN,
        /** Exactly one character. */
        CHARACTER,
        /** One of {@link #choices()}. */
        CHOICE,
    }

    public static final ConfigType<String> STRING = new ConfigType<>(Kind.STRING, text -> text, text -> text,
            List.of());
    public static final ConfigType<Long> LONG = new ConfigType<>(Kind.LONG, ConfigType::parseLong,
            value -> Long.toString(value), List.of());
    public static final ConfigType<Boolean> BOOLEAN = new ConfigType<>(Kind.BOOLEAN, ConfigType::parseBoolean,
            value -> Boolean.toString(value), List.of("false", "true"));
    public static final ConfigType<Character> CHARACTER = new ConfigType<>(Kind.CHARACTER, ConfigType::parseCharacter,
            value -> String.valueOf(value), List.of());

    public ConfigType
    {
        requireNonNull(kind, "kind is null");
        requireNonNull(parser, "parser is null");
        requireNonNull(formatter, "formatter is null");
        choices = List.copyOf(requireNonNull(choices, "choices is null"));
    }

    /** The constants of {@code type}, each written as {@link #choiceText(Enum)}. */
    public static <E extends Enum<E>> ConfigType<E> choice(Class<E> type)
    {
        List<String> texts = new ArrayList<>();
        for (E constant : type.getEnumConstants()) {
            texts.add(choiceText(constant));
        }
        List<String> choices = List.copyOf(texts);
        return new ConfigType<>(Kind.CHOICE, text -> {
            int index = choices.indexOf(text);
            if (index < 0) {
                throw new IllegalArgumentException("must be one of " + String.join(", ", choices));
            }
            return type.getEnumConstants()[index];
        }, ConfigType::choiceText, choices);
    }

    /** A value written as text, read by {@code parser} (which names what is wrong), e.g. a format. */
    public static <T> ConfigType<T> text(Function<String, T> parser, Function<? super T, String> formatter)
    {
        return new ConfigType<>(Kind.STRING, parser, formatter, List.of());
    }

    /** How a choice is written in configuration: {@code ADD_COLUMNS} is {@code add-columns}. */
    public static String choiceText(Enum<?> constant)
    {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * @throws IllegalArgumentException with the reason, for users
     */
    public T parse(String text)
    {
        requireNonNull(text, "text is null");
        return parser.apply(text);
    }

    public String format(T value)
    {
        return formatter.apply(requireNonNull(value, "value is null"));
    }

    private static Long parseLong(String text)
    {
        try {
            return Long.parseLong(text.trim());
        }
        catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a whole number");
        }
    }

    private static Boolean parseBoolean(String text)
    {
        return switch (text) {
            case "false" -> false;
            case "true" -> true;
            default -> throw new IllegalArgumentException("must be one of false, true");
        };
    }

    private static Character parseCharacter(String text)
    {
        if (text.length() != 1) {
            throw new IllegalArgumentException("must be exactly one character");
        }
        return text.charAt(0);
    }
}
