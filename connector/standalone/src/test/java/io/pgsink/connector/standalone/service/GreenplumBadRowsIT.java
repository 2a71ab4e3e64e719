package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.GreenplumGiven;
import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractBadRowsTest} with a Greenplum target: the coordinator at {@code PGSINK_TEST_GREENPLUM_URL}. */
@GreenplumGiven
class GreenplumBadRowsIT
        extends AbstractBadRowsTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingGreenplum.server();
    }
}
