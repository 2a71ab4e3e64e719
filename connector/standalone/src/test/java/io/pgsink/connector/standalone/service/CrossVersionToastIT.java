package io.pgsink.connector.standalone.service;

import io.pgsink.copy.testing.CrossVersion;

/**
 * {@link ToastIT} (out-of-line values and unchanged-TOAST placeholders) from each source to each
 * target version of the cross-version suite.
 */
@CrossVersion
class CrossVersionToastIT
        extends ToastIT
{
}
