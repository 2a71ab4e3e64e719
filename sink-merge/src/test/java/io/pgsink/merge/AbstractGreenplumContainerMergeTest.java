package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;

import java.util.regex.Pattern;

/** The Greenplum merge suite on a container of {@link #image()}, started for the class and stopped after it. */
abstract class AbstractGreenplumContainerMergeTest
        extends AbstractGreenplumMergeTest
{
    private TestingGreenplumServer greenplum;

    protected abstract TestingGreenplumServer.Image image();

    @Override
    protected TestingPostgreSqlServer server()
    {
        if (greenplum == null) {
            greenplum = TestingGreenplumServer.start(image());
        }
        return greenplum.server();
    }

    @Override
    protected void stopServer()
    {
        if (greenplum != null) {
            greenplum.close();
        }
    }

    @Override
    protected String expectedVersion()
    {
        return Pattern.quote(image().version);
    }
}
