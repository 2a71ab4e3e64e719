package io.pgsink.merge.write;

import io.pgsink.core.buffer.RowChange;

/** Which changes of a table batch one COPY writes (see {@link TableWriter}). */
enum RowFilter
{
    /** Final rows with every value known: COPYed straight into the target. */
    DIRECT {
        @Override
        boolean test(RowChange change)
        {
            return !change.isDelete() && !change.hasUnavailableValues();
        }
    },
    /** Final rows of fresh keys with every value known. */
    DIRECT_FRESH {
        @Override
        boolean test(RowChange change)
        {
            return change.isFresh() && DIRECT.test(change);
        }
    },
    /** Nothing. */
    NONE {
        @Override
        boolean test(RowChange change)
        {
            return false;
        }
    },
    /** Keys to delete first and rows to fill from the target: every change. */
    STAGED {
        @Override
        boolean test(RowChange change)
        {
            return true;
        }
    },
    /** As {@link #STAGED}, but fresh rows need no delete. */
    STAGED_TRUSTING_FRESH_KEYS {
        @Override
        boolean test(RowChange change)
        {
            return change.isDelete() || !change.isFresh() || change.hasUnavailableValues();
        }
    };

    abstract boolean test(RowChange change);
}
