package io.pgsink.connector.standalone.cli;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractVerifyCommandTest} with a PostgreSQL target. */
class VerifyCommandIT
        extends AbstractVerifyCommandTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
