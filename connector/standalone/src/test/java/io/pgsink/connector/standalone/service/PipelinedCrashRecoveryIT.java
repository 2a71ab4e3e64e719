package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

import java.util.Map;

/**
 * {@link AbstractCrashRecoveryTest} with {@code flush.pipelined=true}: killed while a batch applies on
 * the applier thread and the next one is merged, the service must still resume exactly after the last
 * committed batch, the slot never ahead of the target.
 */
class PipelinedCrashRecoveryIT
        extends AbstractCrashRecoveryTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }

    @Override
    protected Map<String, String> extraProperties()
    {
        return Map.of("flush.pipelined", "true");
    }
}
