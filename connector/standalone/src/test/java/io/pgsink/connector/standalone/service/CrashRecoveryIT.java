package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractCrashRecoveryTest} with a PostgreSQL target. */
class CrashRecoveryIT
        extends AbstractCrashRecoveryTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
