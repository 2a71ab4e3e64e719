package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractStandaloneServiceTest} with a PostgreSQL target. */
class StandaloneServiceIT
        extends AbstractStandaloneServiceTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
