package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link CrashRecoveryIT} (a killed service resumes without loss or duplicates) from each source
 * to each target version of the cross-version suite; with the whole matrix only (minutes per
 * pair).
 */
@CrossVersion(matrixOnly = true)
class CrossVersionCrashRecoveryIT
        extends CrashRecoveryIT
{
}
