package io.pgsink.connector.standalone.load;

import io.pgsink.core.change.TableId;
import io.pgsink.merge.state.LoadProgress;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * Which streamed changes the initial load already holds, per table: those of transactions visible
 * in the snapshot the table was loaded at. The stream starts at the permanent slot's consistent
 * point, so for tables loaded at that slot's own snapshot no streamed transaction is visible in it;
 * a table reloaded after a crash was read at a later snapshot (of a temporary slot), and the
 * transactions streamed between the two points that this later snapshot already shows must not be
 * applied to it again.
 *
 * <p>pgoutput does not hand Debezium a transaction's commit LSN, but it does hand the transaction id
 * ({@code source.txId}, 32 bits): a transaction is in a snapshot exactly when its id is below the
 * snapshot's {@code xmin}, or below {@code xmax} and not in the snapshot's in-progress list. Since
 * every change of a transaction visible in the snapshot precedes the snapshot's consistent point,
 * changes after that point ({@code source.lsn}) are never skipped, which also bounds the comparison
 * of 32-bit ids to a short stretch of the stream.
 *
 * <p>Immutable and thread-safe.
 */
public final class LoadedChanges
{
    public static final LoadedChanges NONE = new LoadedChanges(Map.of());

    private final Map<TableId, Cut> cuts;

    private LoadedChanges(Map<TableId, Cut> cuts)
    {
        this.cuts = Map.copyOf(cuts);
    }

    public static LoadedChanges of(LoadProgress progress)
    {
        Map<TableId, Cut> cuts = new HashMap<>();
        progress.tables().forEach((table, tableProgress) -> {
            if (!tableProgress.snapshot().isEmpty()) {
                cuts.put(table, Cut.parse(tableProgress.loadLsn(), tableProgress.snapshot()));
            }
        });
        return new LoadedChanges(cuts);
    }

    /**
     * Whether {@code record} is a change the load already copied (never a snapshot read, never a record without source
     * information).
     */
    public boolean covers(SourceRecord record)
    {
        if (cuts.isEmpty() || !(record.value() instanceof Struct envelope) || envelope.schema().field("source") == null
                || envelope.schema().field("op") == null) {
            return false;
        }
        if ("r".equals(envelope.getString("op"))) {
            return false;
        }
        Struct source = envelope.getStruct("source");
        if (source == null || source.schema().field("txId") == null || source.schema().field("lsn") == null) {
            return false;
        }
        Cut cut = cuts.get(TableId.of(source.getString("schema"), source.getString("table")));
        Long transaction = source.getInt64("txId");
        Long lsn = source.getInt64("lsn");
        return cut != null && transaction != null && lsn != null && cut.covers(lsn, transaction);
    }

    /** Whether nothing is ever skipped. */
    public boolean isEmpty()
    {
        return cuts.isEmpty();
    }

    record Cut(long lsn, int xmin, int xmax, int[] inProgress)
    {
        static Cut parse(String lsn, String snapshot)
        {
            String[] parts = snapshot.split(":", -1);
            int[] inProgress = parts.length < 3 || parts[2].isEmpty() ? new int[0]
                    : Arrays.stream(parts[2].split(",")).mapToInt(xid -> (int) Long.parseLong(xid)).toArray();
            Arrays.sort(inProgress);
            return new Cut(parseLsn(lsn), (int) Long.parseLong(parts[0]), (int) Long.parseLong(parts[1]), inProgress);
        }

        boolean covers(long changeLsn, long transactionId)
        {
            if (Long.compareUnsigned(changeLsn, lsn) >= 0) {
                return false;
            }
            int xid = (int) transactionId;
            // 32-bit transaction ids compare modulo 2^32, as PostgreSQL's TransactionIdPrecedes does
            if (xid - xmin < 0) {
                return true;
            }
            if (xid - xmax >= 0) {
                return false;
            }
            return Arrays.binarySearch(inProgress, xid) < 0;
        }
    }

    static long parseLsn(String lsn)
    {
        int slash = lsn.indexOf('/');
        return (Long.parseLong(lsn.substring(0, slash), 16) << 32) | Long.parseLong(lsn.substring(slash + 1), 16);
    }
}
