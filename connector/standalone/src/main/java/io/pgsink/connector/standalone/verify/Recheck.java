package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.verify.ComparedSide;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

import static java.util.Objects.requireNonNull;

/**
 * Re-checks the keys a comparison found differing, so that a key that only differed because the
 * sink had not applied the source's latest changes yet (the ranges are read on the source and the
 * target at slightly different moments, while the service streams) is not reported. Each round,
 * for the keys still in question:
 * <ol>
 * <li>reads their source rows in a repeatable-read transaction, then the source's WAL insert
 *     position {@code L}: every transaction those rows show committed before {@code L};</li>
 * <li>waits until the sink's stored position is at or past {@code L} ({@link SinkProgress}), so the
 *     target holds at least what those source rows show;</li>
 * <li>reads their target rows, then their source rows again.</li>
 * </ol>
 * A key whose target row equals its source row as read before or after is settled (the sink may
 * already hold the newer change). A key whose target row differs from a source row that did not
 * change during the round differs for good: reported. A key whose source row changed during the
 * round goes to the next round, up to {@link VerifyOptions#rechecks} rounds; a key still changing
 * then is not reported as a difference (the sink rewrites it with each change it applies) but
 * counted in the summary as not confirmed: a live workload gives no false positive.
 *
 * <p>When no service streams (the replication slot is idle), the target does not move: the keys are
 * compared once more and reported as of the sink's stored position. When the sink does not reach
 * {@code L} within {@link VerifyOptions#catchUpTimeout}, the keys are reported as of its position,
 * and the report says so. Reads only, on both sides: streaming pays nothing but the reads.
 */
final class Recheck
{
    /** Keys per statement: well below the 32767 bind parameters of the protocol. */
    private static final int BATCH = 500;
    private static final long POLL_MILLIS = 100;

    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;

    Recheck(LoadSettings settings, TargetConnector target, VerifyOptions options)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
    }

    /** Keeps in each result only the keys that still differ; returns how they were re-checked, for the report. */
    String run(List<TableResult> results)
            throws InterruptedException
    {
        int candidates = results.stream().mapToInt(result -> result.differences().size()).sum();
        if (candidates == 0) {
            return "";
        }
        try (Connection source = Verifier.settled(settings.source().connect("pgsink verify", false));
                Connection targetConnection = Verifier.settledTarget(target.connect(),
                        settings.sink().targetDialect())) {
            boolean streaming = !settings.slotName().isEmpty() && SinkProgress.streaming(source, settings.slotName());
            long deadline = System.nanoTime() + options.catchUpTimeout().toNanos();
            Round last = null;
            int changing = 0;
            for (TableResult result : results) {
                List<Difference> confirmed = new ArrayList<>();
                Map<List<String>, Difference.Kind> pending = new LinkedHashMap<>();
                result.differences().forEach(difference -> pending.put(difference.key(), difference.kind()));
                for (int round = 0; round < options.rechecks() && !pending.isEmpty(); round++) {
                    last = round(source, targetConnection, result.table(), pending, confirmed, streaming, deadline);
                    if (!last.caughtUp()) {
                        break;
                    }
                }
                // still changing: the sink rewrites these keys with each change, so none is a difference
                changing += pending.size();
                result.confirmed(confirmed);
            }
            long reported = results.stream().mapToLong(result -> result.differences().size()).sum();
            return describe(candidates, reported, changing, streaming, requireNonNull(last, "last"));
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, "Cannot re-check the differing keys");
        }
    }

    /** One round over {@code pending}: settled keys leave it, keys that differ for good move to {@code confirmed}. */
    private Round round(Connection source, Connection targetConnection, TablePair table,
            Map<List<String>, Difference.Kind> pending, List<Difference> confirmed, boolean streaming, long deadline)
            throws SQLException, InterruptedException
    {
        List<List<String>> keys = new ArrayList<>(pending.keySet());
        source.setAutoCommit(false);
        source.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        Map<List<String>, String> before;
        long sourceLsn;
        try {
            before = rows(source, table.source(), keys);
            sourceLsn = SinkProgress.currentLsn(source);
            source.commit();
        }
        finally {
            source.setAutoCommit(true);
            source.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        if (settings.slotName().isEmpty()) {
            return roundByTime(source, targetConnection, table, pending, confirmed, before, sourceLsn);
        }
        OptionalLong sinkLsn = SinkProgress.storedLsn(targetConnection, settings.sink());
        boolean caughtUp = false;
        boolean quiet = false;
        long quietSince = System.nanoTime();
        OptionalLong quietLsn = OptionalLong.empty();
        while (streaming) {
            if (sinkLsn.isPresent() && Long.compareUnsigned(sinkLsn.getAsLong(), sourceLsn) >= 0) {
                caughtUp = true;
                break;
            }
            // a source whose captured tables are idle moves no stored position: the service received
            // everything up to L, and its position stood still for the quiet period
            OptionalLong received = SinkProgress.receivedLsn(source, settings.slotName());
            boolean receivedAll = received.isPresent() && Long.compareUnsigned(received.getAsLong(), sourceLsn) >= 0;
            if (!receivedAll || !sinkLsn.equals(quietLsn)) {
                quietSince = System.nanoTime();
                quietLsn = sinkLsn;
            }
            else if (System.nanoTime() - quietSince >= quietNanos()) {
                caughtUp = true;
                quiet = true;
                break;
            }
            if (System.nanoTime() - deadline > 0) {
                break;
            }
            Thread.sleep(POLL_MILLIS);
            sinkLsn = SinkProgress.storedLsn(targetConnection, settings.sink());
        }
        Map<List<String>, String> targetRows = rows(targetConnection, table.target(), keys);
        Map<List<String>, String> after = rows(source, table.source(), keys);
        for (List<String> key : keys) {
            Optional<Difference.Kind> kind = Difference.of(before.get(key), targetRows.get(key));
            if (kind.isEmpty() || Difference.of(after.get(key), targetRows.get(key)).isEmpty()) {
                pending.remove(key);
            }
            else if (Objects.equals(before.get(key), after.get(key)) || !caughtUp) {
                pending.remove(key);
                confirmed.add(new Difference(kind.get(), key));
            }
            else {
                pending.put(key, kind.get());
            }
        }
        return new Round(quiet, caughtUp || !streaming, sourceLsn, sinkLsn);
    }

    /**
     * A round without a replication slot to follow (a Kafka Connect sink stores Kafka offsets, not LSNs):
     * the keys are compared again until each target row equals its source row, for at most
     * {@link VerifyOptions#catchUpTimeout}; a key whose source row did not change in that time and whose
     * target row still differs is reported, one whose source row changed goes to the next round.
     */
    private Round roundByTime(Connection source, Connection targetConnection, TablePair table,
            Map<List<String>, Difference.Kind> pending, List<Difference> confirmed, Map<List<String>, String> before,
            long sourceLsn)
            throws SQLException, InterruptedException
    {
        long deadline = System.nanoTime() + options.catchUpTimeout().toNanos();
        Map<List<String>, String> targetRows;
        Map<List<String>, String> after;
        while (true) {
            List<List<String>> keys = new ArrayList<>(pending.keySet());
            targetRows = rows(targetConnection, table.target(), keys);
            after = rows(source, table.source(), keys);
            for (List<String> key : keys) {
                if (Difference.of(after.get(key), targetRows.get(key)).isEmpty()) {
                    pending.remove(key);
                }
            }
            if (pending.isEmpty() || System.nanoTime() - deadline >= 0) {
                break;
            }
            Thread.sleep(POLL_MILLIS);
        }
        for (List<String> key : new ArrayList<>(pending.keySet())) {
            Optional<Difference.Kind> kind = Difference.of(after.get(key), targetRows.get(key));
            if (kind.isPresent() && Objects.equals(before.get(key), after.get(key))) {
                pending.remove(key);
                confirmed.add(new Difference(kind.get(), key));
            }
        }
        return new Round(false, true, sourceLsn, OptionalLong.empty());
    }

    /**
     * How long a position must stand still, with everything received, to mean that nothing is left
     * to apply: three flush intervals, at least 2 s.
     */
    private long quietNanos()
    {
        return TimeUnit.MILLISECONDS.toNanos(Math.max(2000, 3 * settings.sink().flushPolicy().intervalMillis()));
    }

    private static Map<List<String>, String> rows(Connection connection, ComparedSide side, List<List<String>> keys)
            throws SQLException
    {
        Map<List<String>, String> rows = new HashMap<>();
        for (int from = 0; from < keys.size(); from += BATCH) {
            List<List<String>> batch = keys.subList(from, Math.min(keys.size(), from + BATCH));
            rows.putAll(ChunkComparer.rowsByKey(connection, side, batch));
        }
        return rows;
    }

    private String describe(int candidates, long reported, int changing, boolean streaming, Round last)
    {
        String sink = last.sinkLsn().isPresent() ? SinkProgress.text(last.sinkLsn().getAsLong()) : "none stored";
        String checked = "re-checked " + candidates + (candidates == 1 ? " differing key" : " differing keys")
                + ", " + reported + " still differ";
        if (settings.slotName().isEmpty()) {
            return checked + " after their source rows stood still for " + options.catchUpTimeout().toMillis()
                    + " ms (--catch-up-timeout-ms; a Kafka Connect sink has no replication slot to follow)"
                    + (changing > 0 ? "; " + changing + " not confirmed: they changed on the source during each of "
                    + options.rechecks() + " re-checks" : "");
        }
        if (!streaming) {
            return checked + ", as of the sink's stored position " + sink + " (no service streams: replication slot "
                    + settings.slotName() + " is idle; source at "
                    + SinkProgress.text(last.sourceLsn()) + ")";
        }
        if (!last.caughtUp()) {
            return checked + ", as of the sink's position " + sink + ": it did not reach the source's "
                    + SinkProgress.text(last.sourceLsn()) + " within " + options.catchUpTimeout().toMillis()
                    + " ms (--catch-up-timeout-ms), so some may only be changes not applied yet";
        }
        String source = SinkProgress.text(last.sourceLsn());
        String how = last.quiet()
                ? " after the sink received the source up to " + source
                + " with nothing left to apply (its position " + sink + " stood still)"
                : " after the sink applied the source up to " + source;
        return checked + how
                + (changing > 0 ? "; " + changing + " not confirmed: they changed on the source during each of "
                + options.rechecks() + " re-checks (run verify again when they are quieter)" : "");
    }

    /**
     * How a round ended.
     *
     * @param quiet the sink was taken to have caught up because it received the source's WAL up to
     *         {@code sourceLsn} and its position stood still: nothing captured changed since it
     * @param caughtUp the sink reached {@code sourceLsn} (or no service streams, so waiting is pointless)
     */
    private record Round(boolean quiet, boolean caughtUp, long sourceLsn, OptionalLong sinkLsn) {}
}
