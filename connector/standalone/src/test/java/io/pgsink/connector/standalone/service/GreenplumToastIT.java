package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.GreenplumGiven;
import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractToastTest} with a Greenplum target: the coordinator at {@code PGSINK_TEST_GREENPLUM_URL}. */
@GreenplumGiven
class GreenplumToastIT
        extends AbstractToastTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingGreenplum.server();
    }
}
