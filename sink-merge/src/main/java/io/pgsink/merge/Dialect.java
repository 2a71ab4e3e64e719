package io.pgsink.merge;

import io.pgsink.core.ErrorCode;
import io.pgsink.core.SinkException;

import java.util.Locale;

import static java.util.Objects.requireNonNull;

/**
 * The SQL differences between target databases, one small interface per concern.
 *
 * <p>PostgreSQL deletes touched keys with index-driven statements (see {@link PostgreSqlDialect}).
 * Greenplum distributes staging tables like their target so that {@code DELETE ... USING} joins
 * locally on every segment, reuses staging tables (catalog changes are expensive on an MPP
 * cluster), and never uses {@code INSERT ... ON CONFLICT} (Greenplum 6 lacks it).
 */
public final class Dialect
{
    public static final Dialect POSTGRESQL = new Dialect("postgresql", false, new PostgreSqlDialect(), new PostgreSqlDialect(), new PostgreSqlDialect());
    public static final Dialect GREENPLUM = new Dialect("greenplum", true, new GreenplumDialect(), new GreenplumDialect(), new GreenplumDialect());

    private final String name;
    private final boolean greenplum;
    private final StagingSql staging;
    private final DeleteSql delete;
    private final OffsetSql offsets;

    private Dialect(String name, boolean greenplum, StagingSql staging, DeleteSql delete, OffsetSql offsets)
    {
        this.name = requireNonNull(name, "name is null");
        this.greenplum = greenplum;
        this.staging = requireNonNull(staging, "staging is null");
        this.delete = requireNonNull(delete, "delete is null");
        this.offsets = requireNonNull(offsets, "offsets is null");
    }

    /** Picks the dialect from the output of {@code SELECT version()}: Greenplum 6/7 and Apache Cloudberry are Greenplum. */
    public static Dialect fromVersion(String version)
    {
        String lower = version.toLowerCase(Locale.ROOT);
        if (lower.contains("greenplum") || lower.contains("cloudberry")) {
            return GREENPLUM;
        }
        return POSTGRESQL;
    }

    /** {@code auto}, {@code postgresql} or {@code greenplum}, as in {@code target.dialect}. */
    public static Dialect forSetting(String setting, String version)
    {
        return switch (setting) {
            case "auto" -> fromVersion(version);
            case "postgresql" -> POSTGRESQL;
            case "greenplum" -> GREENPLUM;
            default -> throw new SinkException(ErrorCode.CONFIG, "Invalid value '" + setting + "' for configuration target.dialect: must be one of auto, postgresql, greenplum");
        };
    }

    public String name()
    {
        return name;
    }

    public boolean isGreenplum()
    {
        return greenplum;
    }

    StagingSql staging()
    {
        return staging;
    }

    DeleteSql delete()
    {
        return delete;
    }

    OffsetSql offsets()
    {
        return offsets;
    }

    @Override
    public String toString()
    {
        return name;
    }
}
