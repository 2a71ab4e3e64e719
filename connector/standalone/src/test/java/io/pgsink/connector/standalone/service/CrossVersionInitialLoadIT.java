package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link InitialLoadIT} (the parallel initial load from an exported snapshot) from each source to
 * each target version of the cross-version suite.
 */
@CrossVersion
class CrossVersionInitialLoadIT
        extends InitialLoadIT
{
}
