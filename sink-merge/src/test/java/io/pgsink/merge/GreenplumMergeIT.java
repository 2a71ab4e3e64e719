package io.pgsink.merge;

import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.GreenplumGiven;

/**
 * The Greenplum merge suite on the coordinator at {@code PGSINK_TEST_GREENPLUM_URL} (Greenplum 6,
 * 7 or Apache Cloudberry), in a schema of its own; skipped, saying why, without the variable.
 */
@GreenplumGiven
class GreenplumMergeIT
        extends AbstractGreenplumMergeTest
{
    @Override
    protected TestingPostgreSqlServer server()
    {
        return TestingGreenplum.server();
    }

    @Override
    protected String expectedVersion()
    {
        return "Greenplum Database \\d+\\.|Cloudberry";
    }
}
