package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractSchemaChangesTest} with a PostgreSQL target. */
class SchemaChangesIT
        extends AbstractSchemaChangesTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
