package io.pgsink.merge;


/**
 * The delete-insert suite ({@link DeleteInsertOnPostgreSqlIT}) with every batch on the small-batch
 * path ({@code SmallBatchWriter}: one DELETE and one INSERT sent together), where it applies.
 */
class SmallBatchDeleteInsertOnPostgreSqlIT
        extends DeleteInsertOnPostgreSqlIT
{
    @Override
    protected String smallBatchMaxEvents()
    {
        return "100000";
    }
}
