package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractChangeMetadataServiceTest} with a PostgreSQL target. */
class ChangeMetadataServiceIT
        extends AbstractChangeMetadataServiceTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
