package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.GreenplumGiven;
import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractStandaloneServiceTest} with a Greenplum target: the coordinator at {@code PGSINK_TEST_GREENPLUM_URL}. */
@GreenplumGiven
class GreenplumStandaloneServiceIT
        extends AbstractStandaloneServiceTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingGreenplum.server();
    }

    @Override
    protected String distributedBy(String columns)
    {
        return " DISTRIBUTED BY (" + columns + ")";
    }
}
