package io.pgsink.connector.debezium;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZonedDateTime;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Column defaults in Debezium's schemas that may not be the source's. Debezium reads a column's
 * default expression and turns it into a value; one it cannot evaluate (a function call such as
 * {@code now()}, {@code gen_random_uuid()}, {@code current_user}) becomes a stand-in instead: the
 * epoch ({@code 1970-01-01}, midnight) for the date and time types, the nil UUID, {@code {}} for
 * json, the empty string for xml, zero for an interval, and the expression's own text for the text
 * types ({@code CURRENT_USER}). A record cannot tell that stand-in from the same constant written
 * as the default, so such a default is unknown (see {@code ColumnSchema.UnknownDefault}); any other
 * default is the constant it says.
 *
 * <p>Stateless.
 */
final class MadeUpDefaults
{
    private static final Set<String> DATE_TIME_TYPES = Set.of("date", "time", "timetz", "timestamp", "timestamptz");
    private static final Set<String> TEXT_TYPES = Set.of("text", "varchar", "bpchar", "char", "name", "citext");
    /** The SQL value functions PostgreSQL prints in a default without parentheses. */
    private static final Set<String> VALUE_FUNCTIONS = Set.of("current_user", "session_user", "current_role", "user",
            "current_schema", "current_catalog",
            "current_date", "current_time", "current_timestamp", "localtime", "localtimestamp");
    /** What an expression has and a plain text rarely does: a call, a cast, an operator between terms. */
    private static final Pattern EXPRESSION = Pattern.compile(".*(\\(.*\\)|::|\\|\\|).*", Pattern.DOTALL);

    private MadeUpDefaults() {}

    /**
     * Whether {@code value}, the default Debezium's schema gives a column of source type
     * {@code sourceType} (a declaration such as {@code timestamptz} or {@code varchar(20)}), may be
     * a stand-in for a default it could not evaluate. False for an unknown type.
     */
    static boolean mayBeMadeUp(String sourceType, Object value)
    {
        String type = baseType(sourceType);
        if (DATE_TIME_TYPES.contains(type)) {
            return isEpoch(value);
        }
        if (TEXT_TYPES.contains(type)) {
            String text = value.toString().trim();
            return VALUE_FUNCTIONS.contains(text.toLowerCase(Locale.ROOT)) || EXPRESSION.matcher(text).matches();
        }
        return switch (type) {
            case "uuid" -> value.toString().equals("00000000-0000-0000-0000-000000000000");
            case "json", "jsonb" -> value.toString().trim().equals("{}");
            case "xml" -> value.toString().isEmpty();
            case "interval" -> isZero(value);
            default -> false;
        };
    }

    private static boolean isEpoch(Object value)
    {
        if (value instanceof LocalDate date) {
            return date.equals(LocalDate.EPOCH);
        }
        if (value instanceof LocalTime time) {
            return time.equals(LocalTime.MIDNIGHT);
        }
        if (value instanceof OffsetTime time) {
            return time.toLocalTime().equals(LocalTime.MIDNIGHT);
        }
        if (value instanceof LocalDateTime dateTime) {
            return dateTime.equals(LocalDate.EPOCH.atStartOfDay());
        }
        if (value instanceof Instant instant) {
            return instant.equals(Instant.EPOCH);
        }
        if (value instanceof OffsetDateTime dateTime) {
            return dateTime.toInstant().equals(Instant.EPOCH);
        }
        if (value instanceof ZonedDateTime dateTime) {
            return dateTime.toInstant().equals(Instant.EPOCH);
        }
        // another representation: the epoch's text
        String text = value.toString();
        return text.startsWith("1970-01-01") || text.startsWith("00:00:00");
    }

    private static boolean isZero(Object value)
    {
        if (value instanceof Duration duration) {
            return duration.isZero();
        }
        if (value instanceof Number number) {
            return number.doubleValue() == 0;
        }
        // ISO-8601 (PT0S, P0D) or PostgreSQL text (00:00:00): no digit but zeros
        return value.toString().chars().filter(Character::isDigit).allMatch(digit -> digit == '0');
    }

    /** {@code varchar(20)} → {@code varchar}, {@code int4[]} → {@code int4[]} (arrays are never stand-ins). */
    private static String baseType(String declaration)
    {
        String type = declaration.toLowerCase(Locale.ROOT).trim();
        int parenthesis = type.indexOf('(');
        return parenthesis >= 0 && !type.endsWith("[]") ? type.substring(0, parenthesis) : type;
    }
}
