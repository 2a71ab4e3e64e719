package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.GreenplumGiven;
import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;

/** {@link AbstractKafkaConnectSinkTest} writing into the Greenplum at {@code PGSINK_TEST_GREENPLUM_URL}. */
@GreenplumGiven
class GreenplumKafkaConnectSinkIT
        extends AbstractKafkaConnectSinkTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingGreenplum.server();
    }
}
