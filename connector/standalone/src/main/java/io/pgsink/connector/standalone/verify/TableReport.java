package io.pgsink.connector.standalone.verify;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * The verdict on one table.
 *
 * @param sourceRows rows read from the source table (at the moments its chunks were read)
 * @param targetRows rows read from the target table, soft-deleted ones left out
 * @param listed the differing keys, in the order found (at most {@code --max-keys})
 * @param unlisted how many more keys differed, by kind, beyond those listed (not re-checked)
 * @param elapsedMillis how long its key ranges took to compare, from its first cut to its last range
 */
record TableReport(TablePair table, long sourceRows, long targetRows, long chunks, long differingChunks,
        List<Difference> listed,
        Map<Difference.Kind, Long> unlisted, long elapsedMillis)
{
    TableReport
    {
        requireNonNull(table, "table is null");
        listed = List.copyOf(listed);
        EnumMap<Difference.Kind, Long> copy = new EnumMap<>(Difference.Kind.class);
        copy.putAll(unlisted);
        unlisted = Collections.unmodifiableMap(copy);
    }

    boolean equal()
    {
        return differences() == 0;
    }

    long differences()
    {
        long count = listed.size();
        for (long more : unlisted.values()) {
            count += more;
        }
        return count;
    }

    long count(Difference.Kind kind)
    {
        long listedCount = listed.stream().filter(difference -> difference.kind() == kind).count();
        return listedCount + unlisted.getOrDefault(kind, 0L);
    }

    List<List<String>> keys(Difference.Kind kind)
    {
        return listed.stream().filter(difference -> difference.kind() == kind).map(Difference::key).toList();
    }
}
