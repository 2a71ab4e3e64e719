package io.pgsink.connector.standalone.verify;

import org.jetbrains.annotations.Nullable;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A key whose row differs between the source and the target; the key's values as text, never the
 * row's other values.
 */
record Difference(Kind kind, List<String> key)
{
    enum Kind
    {
        /** The source has a row with this key, the target none (or a soft-deleted one). */
        MISSING,
        /** The target has a row with this key, the source none. */
        EXTRA,
        /** Both have a row with this key, with different values. */
        DIFFERENT,
        /**
         * The target's row with this key, equal to the source's, sits on a Greenplum segment that does not
         * own the key: a lookup by key misses it, and an upsert of the key makes a second row.
         */
        MISPLACED,
    }

    Difference
    {
        requireNonNull(kind, "kind is null");
        key = List.copyOf(key);
    }

    /** How one key's row differs, from its source and target row hashes (null: no row); empty when it does not. */
    static Optional<Kind> of(@Nullable String sourceHash, @Nullable String targetHash)
    {
        if (sourceHash == null) {
            return targetHash == null ? Optional.empty() : Optional.of(Kind.EXTRA);
        }
        if (targetHash == null) {
            return Optional.of(Kind.MISSING);
        }
        return sourceHash.equals(targetHash) ? Optional.empty() : Optional.of(Kind.DIFFERENT);
    }
}
