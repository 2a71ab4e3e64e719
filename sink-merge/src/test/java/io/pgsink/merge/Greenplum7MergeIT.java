package io.pgsink.merge;

import org.junit.jupiter.api.condition.EnabledIf;

/** The merge suite on Greenplum 7 (PostgreSQL 12 based), in a container. */
@EnabledIf(value = "io.pgsink.merge.TestingGreenplumServer#dockerAvailable", disabledReason = TestingGreenplumServer.NO_DOCKER)
class Greenplum7MergeIT
        extends AbstractGreenplumContainerMergeTest
{
    @Override
    protected TestingGreenplumServer.Image image()
    {
        return TestingGreenplumServer.Image.GREENPLUM_7;
    }
}
