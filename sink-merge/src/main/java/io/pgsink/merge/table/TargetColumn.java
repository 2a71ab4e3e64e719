package io.pgsink.merge.table;

import static java.util.Objects.requireNonNull;

/**
 * A column of a target table, as read from {@code pg_catalog}.
 *
 * @param name column name
 * @param declaredType the type as {@code format_type} prints it, e.g. {@code character varying(20)}; used in DDL
 * @param encodingType {@code pg_type.typname} of the column's type, or of a domain's base type, e.g.
 *         {@code varchar}, {@code _int4}; selects the value encoder
 * @param notNull whether the column is NOT NULL
 * @param generated whether it is a generated column ({@code GENERATED ALWAYS AS (...) STORED}),
 *         which no statement may assign; read on PostgreSQL 12+ only (false elsewhere)
 * @param identityAlways whether it is a {@code GENERATED ALWAYS AS IDENTITY} column, which COPY
 *         writes as given but an UPDATE may only set to DEFAULT; read on PostgreSQL 12+ only
 */
public record TargetColumn(String name, String declaredType, String encodingType, boolean notNull, boolean generated,
        boolean identityAlways)
{
    public TargetColumn
    {
        requireNonNull(name, "name is null");
        requireNonNull(declaredType, "declaredType is null");
        requireNonNull(encodingType, "encodingType is null");
    }

    /** A column that is neither generated nor an identity. */
    public TargetColumn(String name, String declaredType, String encodingType, boolean notNull)
    {
        this(name, declaredType, encodingType, notNull, false, false);
    }
}
