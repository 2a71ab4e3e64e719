package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link SchemaChangesIT} (DDL: added, altered, renamed and dropped columns, new tables) from each
 * source to each target version of the cross-version suite.
 */
@CrossVersion
class CrossVersionSchemaChangesIT
        extends SchemaChangesIT
{
}
