package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractBadRowsTest} with a PostgreSQL target. */
class BadRowsIT
        extends AbstractBadRowsTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
