package io.pgsink.merge;

import io.pgsink.copy.testing.GreenplumGiven;

/**
 * The Greenplum suite ({@link GreenplumMergeIT}) with a sink user that may not UPDATE the tables
 * ({@link TestingRoleWithoutUpdate}): Greenplum 7's upsert needs UPDATE, so every table is deleted
 * from and inserted into, and soft deletes are refused with a message that says why.
 */
@GreenplumGiven
class GreenplumWithoutUpdateIT
        extends GreenplumMergeIT
{
    @Override
    public boolean suiteMayUpdate()
    {
        return false;
    }
}
