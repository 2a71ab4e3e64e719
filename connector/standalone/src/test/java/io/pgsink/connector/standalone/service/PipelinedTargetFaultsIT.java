package io.pgsink.connector.standalone.service;

import java.util.Map;

/**
 * {@link TargetFaultsIT} with {@code flush.pipelined=true}: connections killed and the target
 * restarted while a batch applies on the applier thread; a failed batch in flight is retried with
 * backoff by the next flush, and the target ends equal to the source.
 */
class PipelinedTargetFaultsIT
        extends TargetFaultsIT
{
    @Override
    protected Map<String, String> extraProperties()
    {
        return Map.of("flush.pipelined", "true");
    }
}
