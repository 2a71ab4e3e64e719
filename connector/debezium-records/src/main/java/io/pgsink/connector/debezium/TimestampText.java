package io.pgsink.connector.debezium;

import java.time.LocalDateTime;
import java.time.chrono.IsoChronology;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.time.format.SignStyle;
import java.time.format.TextStyle;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Optional;

/**
 * PostgreSQL's text of a {@code timestamp} with {@code DateStyle=ISO} (pgjdbc's):
 * {@code 294276-12-31 23:59:59.999999}, {@code 4714-11-24 00:00:00 BC}; the year of the era has
 * four digits or more, the fraction no trailing zeros. Written by the standalone service's
 * {@code pgsinktext} converter, which sends timestamp columns as text because Debezium's
 * {@code MicroTimestamp} cannot hold PostgreSQL's last 30 years, and read back here into the
 * {@code LocalDateTime} the column's other encodings become.
 *
 * <p>Stateless.
 */
public final class TimestampText
{
    private static final String BC = " BC";
    private static final DateTimeFormatter PRINTER = new DateTimeFormatterBuilder()
            .appendValue(ChronoField.YEAR_OF_ERA, 4, 10, SignStyle.NOT_NEGATIVE)
            .appendPattern("-MM-dd HH:mm:ss")
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .toFormatter(Locale.ROOT);
    private static final DateTimeFormatter PARSER = new DateTimeFormatterBuilder()
            .append(PRINTER)
            .optionalStart().appendLiteral(' ').appendText(ChronoField.ERA, TextStyle.SHORT).optionalEnd()
            .parseDefaulting(ChronoField.ERA, 1)
            .toFormatter(Locale.ENGLISH)
            .withChronology(IsoChronology.INSTANCE)
            .withResolverStyle(ResolverStyle.STRICT);

    private TimestampText() {}

    /** The text PostgreSQL prints for {@code timestamp}. */
    public static String format(LocalDateTime timestamp)
    {
        String text = PRINTER.format(timestamp);
        return timestamp.getYear() <= 0 ? text + BC : text;
    }

    /** The timestamp of PostgreSQL's text; empty for {@code infinity}, {@code -infinity} and text of another form. */
    static Optional<LocalDateTime> parse(String text)
    {
        try {
            return Optional.of(LocalDateTime.parse(text, PARSER));
        }
        catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
