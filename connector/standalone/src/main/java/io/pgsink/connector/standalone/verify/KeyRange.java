package io.pgsink.connector.standalone.verify;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The keys of a table after {@code lower} and up to {@code upper} in key order; an absent bound
 * leaves that end open. Bounds are keys as text, one value per key column.
 */
record KeyRange(TablePair table, Optional<List<String>> lower, Optional<List<String>> upper)
{
    KeyRange
    {
        requireNonNull(table, "table is null");
        lower = lower.map(List::copyOf);
        upper = upper.map(List::copyOf);
    }
}
