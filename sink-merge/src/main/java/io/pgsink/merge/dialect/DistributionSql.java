package io.pgsink.merge.dialect;

import java.util.List;

/**
 * How a dialect spreads a table it creates over the cluster: the clause that ends its
 * {@code CREATE TABLE}. Staging tables, the offsets and dead-letter tables ({@code SinkTables})
 * and tables created for {@code schema.evolution} ({@code SchemaEvolution}) all take it from here.
 */
public interface DistributionSql
{
    /**
     * The clause, with a leading space, that distributes a new table by {@code columns} (in that
     * order; empty for no key), or the empty string where tables are not distributed.
     */
    String distributedBy(List<String> columns);

    /**
     * Whether tables have a distribution key, to read from the catalog and to check against the
     * primary key: a key must live on one segment for the staging join to find it there.
     */
    boolean distributes();

    /**
     * Session settings under which a lookup by key reads every segment, not only the one that
     * owns the key: {@code pgsink verify} must also see a row that sits on a segment that does not
     * own its key. Empty where tables are not distributed.
     */
    List<String> everySegmentSession();
}
