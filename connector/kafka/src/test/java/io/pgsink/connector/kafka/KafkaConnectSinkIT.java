package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractKafkaConnectSinkTest} writing into PostgreSQL. */
class KafkaConnectSinkIT
        extends AbstractKafkaConnectSinkTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }
}
