package io.pgsink.merge;

import io.pgsink.merge.write.TableWriter;

/**
 * The Greenplum-dialect suite ({@link GreenplumDialectOnPostgreSqlIT}) with {@code target.update.mode=auto}:
 * on PostgreSQL 12+ the dialect takes the server for a Greenplum 7, so flushes upsert
 * ({@link TableWriter.ApplyMethod#UPSERT}) where they would merge.
 */
class GreenplumDialectUpsertOnPostgreSqlIT
        extends GreenplumDialectOnPostgreSqlIT
{
    @Override
    protected boolean upserts()
    {
        return true;
    }
}
