package io.pgsink.merge;

import org.junit.jupiter.api.condition.EnabledIf;

/** The merge suite on Greenplum 6 (PostgreSQL 9.4 based), in a container. */
@EnabledIf(value = "io.pgsink.merge.TestingGreenplumServer#dockerAvailable", disabledReason = TestingGreenplumServer.NO_DOCKER)
class Greenplum6MergeIT
        extends AbstractGreenplumContainerMergeTest
{
    @Override
    protected TestingGreenplumServer.Image image()
    {
        return TestingGreenplumServer.Image.GREENPLUM_6;
    }
}
