package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link DataTypesIT} (every type Debezium emits, through snapshot and stream) from each source to
 * each target version of the cross-version suite.
 */
@CrossVersion
class CrossVersionDataTypesIT
        extends DataTypesIT
{
}
