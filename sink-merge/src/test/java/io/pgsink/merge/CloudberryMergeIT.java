package io.pgsink.merge;

import org.junit.jupiter.api.condition.EnabledIf;

/** The merge suite on Apache Cloudberry 2 (PostgreSQL 14 based), in a container. */
@EnabledIf(value = "io.pgsink.merge.TestingGreenplumServer#dockerAvailable", disabledReason = TestingGreenplumServer.NO_DOCKER)
class CloudberryMergeIT
        extends AbstractGreenplumContainerMergeTest
{
    @Override
    protected TestingGreenplumServer.Image image()
    {
        return TestingGreenplumServer.Image.CLOUDBERRY_2;
    }
}
