package io.pgsink.merge.dialect;

import io.pgsink.merge.table.TargetColumn;
import io.pgsink.merge.table.TargetTable;

import java.util.List;

/** How a dialect creates the staging table a flush COPYs into. */
public interface StagingSql
{
    /**
     * A temporary table with the op marker, the unavailable-columns mask and the given columns, all
     * nullable, emptied at every commit so that it can be reused by every flush of the connection.
     */
    String createStagingTable(String stagingName, List<TargetColumn> columns, TargetTable target);
}
