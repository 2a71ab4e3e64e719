package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.verify.RowCopy;
import io.pgsink.merge.verify.StoredPositions;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * {@code pgsink repair}: verifies ({@link Verifier}, differing keys re-checked), then writes
 * exactly the keys that differ, from the source's current rows: a key the source has gets its
 * target row deleted and the source's inserted; a key it lacks gets its target row deleted (with
 * soft deletes: marked deleted). All in one target transaction.
 *
 * <p>While a service streams, that transaction first locks the sink's rows of the offsets table,
 * which every flush updates in its own transaction: no flush can commit between the repair's
 * source read and its commit, and a flush in progress is waited for. The rows written are the
 * source's state at a moment {@code L} after every change the sink applied (its stored position
 * is what the lock holds still), so the stream can only bring changes older than {@code L} (which
 * it applies in order, ending at the state the repair wrote, or later) or newer ones, never
 * overwrite the repair with a state older than what it applies next. The lock holds the service's
 * flushes for the repair's few statements. The repair writes the columns the sink writes; other
 * metadata columns keep their defaults.
 */
public final class Repairer
{
    private static final int BATCH = 500;

    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;

    public Repairer(LoadSettings settings, TargetConnector target, VerifyOptions options)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
    }

    /**
     * What the repair found and did.
     *
     * @param lines one per repaired table, then a summary
     * @param complete whether every differing key was repaired (false when more keys differed than were listed)
     */
    public record Result(VerifyReport verified, List<String> lines, boolean complete)
    {
        public Result
        {
            requireNonNull(verified, "verified is null");
            lines = List.copyOf(lines);
        }
    }

    public Result run()
            throws InterruptedException
    {
        VerifyReport verified = new Verifier(settings, target, options).run();
        List<String> lines = new ArrayList<>();
        if (verified.equal()) {
            lines.add("pgsink repair: nothing to repair, every table is equal");
            return new Result(verified, lines, true);
        }
        long written = 0;
        long removed = 0;
        long unlisted = 0;
        try (Connection source = Verifier.settled(settings.source().connect("pgsink repair", false));
                Connection targetConnection = Verifier.settled(target.connect())) {
            targetConnection.setAutoCommit(false);
            // keeps the service's flushes out until the repair commits
            StoredPositions.read(targetConnection, settings.sink(), true);
            source.setAutoCommit(false);
            source.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            List<Map<List<String>, List<String>>> sourceRows = new ArrayList<>();
            for (TableReport table : verified.tables()) {
                sourceRows.add(readSource(source, table.table().copy(), keys(table)));
            }
            long sourceLsn = SinkProgress.currentLsn(source);
            source.commit();
            for (int i = 0; i < verified.tables().size(); i++) {
                TableReport table = verified.tables().get(i);
                if (table.equal()) {
                    continue;
                }
                Map<List<String>, List<String>> rows = sourceRows.get(i);
                List<List<String>> absent = keys(table).stream().filter(key -> !rows.containsKey(key)).toList();
                long tableRemoved = write(targetConnection, table.table().copy(), rows, absent);
                written += rows.size();
                removed += tableRemoved;
                long more = table.unlisted().values().stream().mapToLong(Long::longValue).sum();
                unlisted += more;
                lines.add("[REPAIRED] " + table.table().describe() + ": " + rows(rows.size())
                        + " written from the source, "
                        + rows(tableRemoved) + " removed" + (more > 0 ? "; " + more
                        + " more differing keys were not listed (--max-keys)" : ""));
            }
            targetConnection.commit();
            lines.add("pgsink repair: " + rows(written) + " written, " + rows(removed)
                    + " removed, as of source " + SinkProgress.text(sourceLsn)
                    + (unlisted > 0 ? "; " + unlisted
                    + " differing keys beyond --max-keys remain: run pgsink repair again" : ""));
            return new Result(verified, lines, unlisted == 0);
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, "Cannot repair the differing keys (nothing was changed)");
        }
    }

    private static String rows(long count)
    {
        return count + (count == 1 ? " row" : " rows");
    }

    private static List<List<String>> keys(TableReport table)
    {
        return table.listed().stream().map(Difference::key).toList();
    }

    /** The source's rows of {@code keys}: each copied column's text by key; keys the source lacks absent. */
    private static Map<List<String>, List<String>> readSource(Connection source, RowCopy copy, List<List<String>> keys)
            throws SQLException
    {
        Map<List<String>, List<String>> rows = new HashMap<>();
        int keyColumns = copy.source().keyColumns().size();
        for (int from = 0; from < keys.size(); from += BATCH) {
            List<List<String>> batch = keys.subList(from, Math.min(keys.size(), from + BATCH));
            try (PreparedStatement statement = source.prepareStatement(copy.readSource(batch.size()))) {
                bindKeys(statement, batch);
                try (ResultSet result = statement.executeQuery()) {
                    while (result.next()) {
                        List<String> key = new ArrayList<>();
                        for (int i = 1; i <= keyColumns; i++) {
                            key.add(result.getString(i));
                        }
                        List<String> values = new ArrayList<>();
                        for (int i = 0; i < copy.sourceColumns().size(); i++) {
                            values.add(result.getString(keyColumns + 1 + i));
                        }
                        rows.put(key, values);
                    }
                }
            }
        }
        return rows;
    }

    /**
     * Deletes and inserts the rows the source has, removes the keys it lacks; returns how many target rows
     * were removed.
     */
    private static long write(Connection target, RowCopy copy, Map<List<String>, List<String>> rows,
            List<List<String>> absent)
            throws SQLException
    {
        List<List<String>> present = new ArrayList<>(rows.keySet());
        for (int from = 0; from < present.size(); from += BATCH) {
            List<List<String>> batch = present.subList(from, Math.min(present.size(), from + BATCH));
            try (PreparedStatement delete = target.prepareStatement(copy.deleteTarget(batch.size()))) {
                bindKeys(delete, batch);
                delete.executeUpdate();
            }
        }
        if (!present.isEmpty()) {
            try (PreparedStatement insert = target.prepareStatement(copy.insertTarget())) {
                for (List<String> key : present) {
                    List<String> values = rows.get(key);
                    for (int i = 0; i < values.size(); i++) {
                        if (values.get(i) == null) {
                            insert.setNull(i + 1, Types.VARCHAR);
                        }
                        else {
                            insert.setString(i + 1, values.get(i));
                        }
                    }
                    insert.addBatch();
                }
                insert.executeBatch();
            }
        }
        long removed = 0;
        for (int from = 0; from < absent.size(); from += BATCH) {
            List<List<String>> batch = absent.subList(from, Math.min(absent.size(), from + BATCH));
            try (PreparedStatement remove = target.prepareStatement(copy.removeTarget(batch.size()))) {
                bindKeys(remove, batch);
                removed += remove.executeUpdate();
            }
        }
        return removed;
    }

    private static void bindKeys(PreparedStatement statement, List<List<String>> keys)
            throws SQLException
    {
        int index = 1;
        for (List<String> key : keys) {
            for (String value : key) {
                statement.setString(index++, value);
            }
        }
    }
}
