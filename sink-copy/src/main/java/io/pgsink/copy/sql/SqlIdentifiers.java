package io.pgsink.copy.sql;

import static java.util.Objects.requireNonNull;

/**
 * Quoting of identifiers and string literals for the SQL pgsink generates. Every identifier is
 * quoted, always: names with capitals, spaces, quotes, unicode or reserved words must work, and
 * quoting unconditionally is the only rule that cannot be wrong.
 */
public final class SqlIdentifiers
{
    private SqlIdentifiers() {}

    /**
     * Returns {@code identifier} as a quoted SQL identifier, {@code "} doubled inside.
     *
     * @throws IllegalArgumentException when it is empty or contains a NUL character, which no
     *         PostgreSQL identifier can
     */
    public static String quote(String identifier)
    {
        requireNonNull(identifier, "identifier is null");
        if (identifier.isEmpty()) {
            throw new IllegalArgumentException("An SQL identifier cannot be empty");
        }
        checkNoNul(identifier, "An SQL identifier");
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    /** Returns {@code "schema"."table"}. */
    public static String qualified(String schema, String table)
    {
        return quote(requireNonNull(schema, "schema is null")) + '.' + quote(requireNonNull(table, "table is null"));
    }

    /**
     * Returns {@code value} as an SQL string literal, {@code '} doubled inside. Backslashes are not
     * escaped: this assumes {@code standard_conforming_strings=on}, the default since PostgreSQL 9.1
     * and in Greenplum 6.
     *
     * @throws IllegalArgumentException when it contains a NUL character, which no SQL text can
     */
    public static String literal(String value)
    {
        requireNonNull(value, "value is null");
        checkNoNul(value, "An SQL string literal");
        return '\'' + value.replace("'", "''") + '\'';
    }

    private static void checkNoNul(String value, String what)
    {
        int nul = value.indexOf('\0');
        if (nul >= 0) {
            throw new IllegalArgumentException(what + " cannot contain a NUL character (U+0000), found at position "
                    + (nul + 1));
        }
    }
}
