package io.pgsink.merge.schema;

import io.pgsink.core.change.ColumnSchema;
import org.jetbrains.annotations.Nullable;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.OffsetTime;
import java.time.ZonedDateTime;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

import static io.pgsink.copy.sql.SqlIdentifiers.literal;

/**
 * A source column's constant default as a target column default: the value's text form, as a
 * string literal cast to the column's source type ({@code '42'::int4}), which gives the target the
 * value the source holds in rows that existed before the column was added (PostgreSQL 11+ stores
 * such a default without rewriting the table, so those rows produce no change events).
 */
final class ColumnDefaults
{
    private static final Pattern CONSTANT =
            Pattern.compile("(?:'(?:[^']|'')*'|-?\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?|true|false|NULL)"
            + "(?:::[\\w \".]+(?:\\(\\d+(?:,\\d+)?\\))?(?:\\[])*)*", Pattern.CASE_INSENSITIVE);

    private ColumnDefaults() {}

    /**
     * The {@code DEFAULT} expression; empty without a default, or for a value of a kind it cannot write (arrays,
     * binary, structured values).
     */
    static Optional<String> expression(ColumnSchema column)
    {
        Object value = column.defaultValue();
        if (value == null || column.typeName().isEmpty()) {
            return Optional.empty();
        }
        return text(value).map(text -> literal(text) + "::" + column.typeName());
    }

    /**
     * Whether a default as PostgreSQL prints it ({@code pg_get_expr}) is a constant: a literal
     * ({@code 42}, {@code 'x'::text}, {@code true}, {@code NULL}) with casts, no function call,
     * operator or SQL value function ({@code CURRENT_USER}). False for null.
     */
    static boolean isConstant(@Nullable String expression)
    {
        return expression != null && CONSTANT.matcher(expression).matches();
    }

    private static Optional<String> text(Object value)
    {
        if (value instanceof BigDecimal decimal) {
            return Optional.of(decimal.toPlainString());
        }
        if (value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof UUID
                || value instanceof LocalDate || value instanceof LocalTime || value instanceof LocalDateTime
                || value instanceof OffsetDateTime || value instanceof OffsetTime || value instanceof Instant) {
            // ISO-8601 for the temporal types, which PostgreSQL reads whatever its DateStyle
            return Optional.of(value.toString());
        }
        if (value instanceof ZonedDateTime zoned) {
            return Optional.of(zoned.toOffsetDateTime().toString());
        }
        return Optional.empty();
    }
}
