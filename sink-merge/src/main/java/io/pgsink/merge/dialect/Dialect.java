package io.pgsink.merge.dialect;

import io.pgsink.core.config.TargetDialect;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * The SQL differences between target databases, one small interface per concern.
 *
 * <p>PostgreSQL deletes touched keys with index-driven statements (see {@link PostgreSqlDialect}).
 * Greenplum distributes staging tables like their target so that {@code DELETE ... USING} joins
 * locally on every segment, reuses staging tables (catalog changes are expensive on an MPP
 * cluster), and never uses {@code INSERT ... ON CONFLICT} (Greenplum 6 lacks it). One Greenplum
 * dialect serves Greenplum 6 (PostgreSQL 9.4 based), 7 (12 based) and Apache Cloudberry (14
 * based): the statements it generates are valid on all three, and their catalogs describe
 * distribution keys alike ({@code gp_distribution_policy.distkey}, an {@code int2vector}).
 * Greenplum 5 and older (PostgreSQL 8.x, {@code gp_distribution_policy.attrnums}, no COPY option
 * lists) are refused.
 */
public final class Dialect
{
    public static final Dialect POSTGRESQL = of("postgresql", new PostgreSqlDialect());
    public static final Dialect GREENPLUM = of("greenplum", new GreenplumDialect());

    /** The oldest Greenplum major version pgsink writes to. */
    static final int MIN_GREENPLUM_VERSION = 6;
    private static final Pattern GREENPLUM_VERSION = Pattern.compile("Greenplum Database (\\d+)\\.");

    private final String name;
    private final StagingSql staging;
    private final DeleteSql delete;
    private final OffsetSql offsets;
    private final DistributionSql distribution;
    private final ServerFeatures features;

    private Dialect(String name, StagingSql staging, DeleteSql delete, OffsetSql offsets, DistributionSql distribution,
            ServerFeatures features)
    {
        this.name = requireNonNull(name, "name is null");
        this.staging = requireNonNull(staging, "staging is null");
        this.delete = requireNonNull(delete, "delete is null");
        this.offsets = requireNonNull(offsets, "offsets is null");
        this.distribution = requireNonNull(distribution, "distribution is null");
        this.features = requireNonNull(features, "features is null");
    }

    private static <T extends StagingSql & DeleteSql & OffsetSql & DistributionSql & ServerFeatures> Dialect of(
            String name, T sql)
    {
        return new Dialect(name, sql, sql, sql, sql, sql);
    }

    /**
     * Picks the dialect from the output of {@code SELECT version()}: Greenplum 6/7 and Apache
     * Cloudberry (also as "Cloudberry Database", its name before Apache) are Greenplum.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) for Greenplum 5 and older
     */
    public static Dialect fromVersion(String version)
    {
        String lower = version.toLowerCase(Locale.ROOT);
        if (lower.contains("cloudberry")) {
            return GREENPLUM;
        }
        if (lower.contains("greenplum")) {
            checkGreenplumVersion(version);
            return GREENPLUM;
        }
        return POSTGRESQL;
    }

    /** The dialect {@code target.dialect} asks for, {@link #fromVersion detected} for {@link TargetDialect#AUTO}. */
    public static Dialect forSetting(TargetDialect setting, String version)
    {
        return switch (setting) {
            case AUTO -> fromVersion(version);
            case POSTGRESQL -> POSTGRESQL;
            case GREENPLUM -> {
                checkGreenplumVersion(version);
                yield GREENPLUM;
            }
        };
    }

    private static void checkGreenplumVersion(String version)
    {
        Matcher matcher = GREENPLUM_VERSION.matcher(version);
        if (matcher.find() && Integer.parseInt(matcher.group(1)) < MIN_GREENPLUM_VERSION) {
            throw new SinkException(ErrorCode.CONFIG, "The target is Greenplum " + matcher.group(1)
                    + " (version() says '" + version + "'), which pgsink does not support:"
                    + " it needs Greenplum " + MIN_GREENPLUM_VERSION + " or later, or Apache Cloudberry (Greenplum "
                    + matcher.group(1)
                    + " is based on PostgreSQL 8 and lacks the COPY options and catalog columns pgsink uses).");
        }
    }

    public String name()
    {
        return name;
    }

    public StagingSql staging()
    {
        return staging;
    }

    public DeleteSql delete()
    {
        return delete;
    }

    public OffsetSql offsets()
    {
        return offsets;
    }

    public DistributionSql distribution()
    {
        return distribution;
    }

    public ServerFeatures features()
    {
        return features;
    }

    @Override
    public String toString()
    {
        return name;
    }
}
