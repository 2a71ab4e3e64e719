package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link TransactionBoundaryIT} (source transactions applied whole) from each source to each
 * target version of the cross-version suite; with the whole matrix only (minutes per pair).
 */
@CrossVersion(matrixOnly = true)
class CrossVersionTransactionBoundaryIT
        extends TransactionBoundaryIT
{
}
