package io.pgsink.merge;

/**
 * The PostgreSQL suite ({@link MergeApplierIT}) applied by delete and insert rather than by
 * {@code MERGE}: what a target before PostgreSQL 15 gets, and one whose sink user may not UPDATE
 * its tables. The sinks' sessions take the role of a user granted everything but UPDATE on the
 * tables of the test schema ({@link TestingRoleWithoutUpdate}).
 */
class DeleteInsertOnPostgreSqlIT
        extends MergeApplierIT
{
    @Override
    public boolean suiteMayUpdate()
    {
        return false;
    }

    @Override
    protected boolean updatesInPlace()
    {
        return false;
    }
}
