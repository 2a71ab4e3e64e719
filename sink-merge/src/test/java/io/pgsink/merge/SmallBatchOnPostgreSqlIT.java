package io.pgsink.merge;


/**
 * The PostgreSQL suite ({@link MergeApplierIT}) with every batch on the small-batch path
 * ({@code SmallBatchWriter}: {@code flush.small.batch.max.events} above any batch of the suite),
 * where it applies.
 */
class SmallBatchOnPostgreSqlIT
        extends MergeApplierIT
{
    @Override
    protected String smallBatchMaxEvents()
    {
        return "100000";
    }
}
