package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.merge.TargetConnector;

import java.util.List;

import static java.util.Objects.requireNonNull;

/** Re-checks the differing keys of a comparison. */
final class Recheck
{
    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;

    Recheck(LoadSettings settings, TargetConnector target, VerifyOptions options)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
    }

    /** Keeps in each result only the keys that still differ; returns how, for the report. */
    String run(List<TableResult> results)
    {
        return "";
    }
}
