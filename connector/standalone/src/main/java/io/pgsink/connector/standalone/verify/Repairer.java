package io.pgsink.connector.standalone.verify;

import io.pgsink.core.buffer.Batch;
import io.pgsink.core.buffer.BatchApplier;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.change.ChangeEvent;
import io.pgsink.core.change.ColumnSchema;
import io.pgsink.core.mapping.ColumnSelectingSink;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.buffer.FlushListener;
import io.pgsink.core.buffer.Sink;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.merge.MergeApplier;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.TargetTable;
import io.pgsink.merge.verify.MisplacedRows;
import io.pgsink.merge.schema.LoadTargets;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.PositionStore;
import io.pgsink.merge.verify.ComparedSide;
import io.pgsink.merge.verify.StoredPositions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * {@code pgsink repair}: verifies ({@link Verifier}, differing keys re-checked), then re-applies
 * exactly the keys that differ, read from the source at a new snapshot, through the service's own
 * apply path: each key the source has becomes an update event carrying the source row, each key it
 * lacks a delete event, and both go through column selection ({@link ColumnSelectingSink}), the
 * buffer's merge by key ({@link BufferedSink}) and {@link MergeApplier} (routing, metadata columns,
 * soft deletes, the target's types), as the service's changes do. The events carry each value as
 * the source prints it (the text form the encoders pass through as is, as the initial load's text
 * COPY does), so every row is complete: no TOAST value is missing.
 *
 * <p>Positions and fences are left alone: the batches the repair applies store no position (the
 * stream resumes where it stood), and the repair's applier claims no writer generation (the running
 * service keeps its own).
 *
 * <p>While a service streams, a connection of the repair first locks the sink's rows of the offsets
 * table and holds them until the repair has committed. Every flush updates those rows in its own
 * transaction: no flush can commit between the repair's source read and its commit, and a flush in
 * progress is waited for. The rows written are the source's state at a moment {@code L} after every
 * change the sink applied (its stored position is what the lock holds still), so the stream can only
 * bring changes older than {@code L} (which it applies in order, ending at the state the repair
 * wrote, or later) or newer ones, never leave the repair's older state over a newer one. On a
 * target whose flushes store their positions last (Greenplum), the lock connection first takes the
 * sink's flush lock ({@link PositionStore#lockFlushes}), which every such flush takes first: a flush
 * then waits before it locks any table the repair writes. The repair's own connections wait at
 * most {@link #LOCK_TIMEOUT} for a lock (a row another client holds), and the repair then fails
 * with nothing changed rather than wait for ever.
 */
public final class Repairer
{
    private static final Logger log = LoggerFactory.getLogger(Repairer.class);
    private static final int BATCH = 500;
    private static final String LOCK_TIMEOUT = "30s";
    /** The source partition of the repair's events; their positions are never stored. */
    private static final String PARTITION = "pgsink repair";

    private final LoadSettings settings;
    private final TargetConnector target;
    private final VerifyOptions options;
    private final Function<SourcePosition, String> positionText;
    private final VerifyListener listener;

    /**
     * @param positionText how {@code metadata.source.position.column} shows a position, as in the service
     */
    public Repairer(LoadSettings settings, TargetConnector target, VerifyOptions options,
            Function<SourcePosition, String> positionText)
    {
        this(settings, target, options, positionText, VerifyListener.NONE);
    }

    /** @param listener told of each table's progress while the repair verifies */
    public Repairer(LoadSettings settings, TargetConnector target, VerifyOptions options,
            Function<SourcePosition, String> positionText, VerifyListener listener)
    {
        this.listener = requireNonNull(listener, "listener is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.target = requireNonNull(target, "target is null");
        this.options = requireNonNull(options, "options is null");
        this.positionText = requireNonNull(positionText, "positionText is null");
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
        VerifyReport verified = new Verifier(settings, target, options, listener).run();
        List<String> lines = new ArrayList<>();
        if (verified.equal()) {
            lines.add("pgsink repair: nothing to repair, every table is equal");
            return new Result(verified, lines, true);
        }
        String sinkName = settings.sink().sinkName();
        for (TableReport table : verified.tables()) {
            TableId routed = settings.sink().tableNameFormat().targetOf(table.table().sourceTable());
            if (!routed.equals(table.table().targetTable())) {
                throw new SinkException(ErrorCode.CONFIG, "Cannot repair " + table.table().describe()
                        + ": the apply path routes it to " + routed + " (a target.table.name.format with ${topic}"
                        + " routes by topic, which repair has not); verify works, repair the keys by hand");
            }
        }
        try (Connection lock = Verifier.settled(target.connect());
                Connection source = Verifier.settled(settings.source().connect("pgsink repair", false));
                MergeApplier applier = MergeApplier.builder(settings.sink()).connector(bounded(target))
                        .positionText(positionText).build()) {
            lock.setAutoCommit(false);
            // keeps the service's flushes out until the repair committed: where they lock their tables before
            // their positions (Greenplum), before they lock any
            Dialect dialect = LoadTargets.dialect(lock, settings.sink().targetDialect());
            new PositionStore(settings.sink()).lockFlushes(lock, dialect, true);
            StoredPositions.read(lock, settings.sink(), true);
            source.setAutoCommit(false);
            source.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            List<Map<List<String>, Object[]>> sourceRows = new ArrayList<>();
            for (TableReport table : verified.tables()) {
                sourceRows.add(table.equal() ? Map.of() : readSource(source, table.table(), keys(table)));
            }
            long sourceLsn = SinkProgress.currentLsn(source);
            source.commit();
            Map<TableId, Long> misplaced = dialect.distribution().distributes()
                    ? deleteMisplaced(dialect, verified) : Map.of();
            log.info("{} - repairing the differing keys of {} table(s), as of source {}; the service's flushes wait",
                    sinkName, verified.tables().stream().filter(table -> !table.equal()).count(),
                    SinkProgress.text(sourceLsn));
            SourcePosition position = new SourcePosition(PARTITION, "{\"lsn\":" + sourceLsn + "}");
            long sourceMillis = System.currentTimeMillis();
            long written = 0;
            long removed = 0;
            long unlisted = 0;
            try (Sink sink = ColumnSelectingSink.wrap(new BufferedSink(sinkName, settings.sink().flushPolicy(),
                    new Unpositioned(applier), FlushListener.NONE, System::nanoTime,
                    settings.sink().toleratesRejectedRows()), settings.sink().columnSelection())) {
                for (int i = 0; i < verified.tables().size(); i++) {
                    TableReport table = verified.tables().get(i);
                    if (table.equal()) {
                        continue;
                    }
                    TableSchema schema = table.table().schema();
                    Map<List<String>, Object[]> rows = sourceRows.get(i);
                    long tableRemoved = 0;
                    for (List<String> key : keys(table)) {
                        Object[] row = rows.get(key);
                        if (row != null) {
                            sink.accept(ChangeEvent.update(schema, null, row, position, sourceMillis));
                        }
                        else {
                            sink.accept(ChangeEvent.delete(schema, keyRow(schema, key), position, sourceMillis));
                            tableRemoved++;
                        }
                    }
                    written += rows.size();
                    removed += tableRemoved;
                    long more = table.unlisted().values().stream().mapToLong(Long::longValue).sum();
                    unlisted += more;
                    long moved = misplaced.getOrDefault(table.table().targetTable(), 0L);
                    lines.add("[REPAIRED] " + table.table().describe() + ": " + rows(rows.size())
                            + " written from the source, " + rows(tableRemoved) + " removed"
                            + (moved > 0 ? ", " + rows(moved) + " on a segment that does not own its key removed"
                            : "")
                            + (more > 0 ? "; " + more + " more differing keys were not listed (--max-keys)" : ""));
                }
                sink.flush();
                sink.awaitApplied();
            }
            lock.commit();
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

    /**
     * Deletes the differing keys' rows that sit on a segment that does not own their key
     * ({@link MisplacedRows}), each table in a transaction of its own: such a row is never the
     * key's row (lookups and the apply path's joins do not find it), so removing it is right
     * whether or not the apply that follows commits. Returns how many per target table.
     */
    private Map<TableId, Long> deleteMisplaced(Dialect dialect, VerifyReport verified)
            throws SQLException
    {
        Map<TableId, Long> deleted = new HashMap<>();
        try (Connection connection = Verifier.withSession(Verifier.settledTarget(target.connect(),
                settings.sink().targetDialect()), "SET lock_timeout = '" + LOCK_TIMEOUT + "'")) {
            for (TableReport table : verified.tables()) {
                if (table.equal()) {
                    continue;
                }
                TableId id = table.table().targetTable();
                List<String> distributionKey = LoadTargets.read(connection, dialect, id)
                        .map(TargetTable::distributionKey).orElse(List.of());
                List<List<String>> keys = keys(table);
                long count = 0;
                for (int from = 0; from < keys.size(); from += BATCH) {
                    count += MisplacedRows.delete(connection, table.table().target(), distributionKey,
                            keys.subList(from, Math.min(keys.size(), from + BATCH)));
                }
                deleted.put(id, count);
            }
        }
        return deleted;
    }

    /** {@code connector}'s connections, waiting at most {@link #LOCK_TIMEOUT} for a lock. */
    private static TargetConnector bounded(TargetConnector connector)
    {
        return () -> Verifier.withSession(connector.connect(), "SET lock_timeout = '" + LOCK_TIMEOUT + "'");
    }

    private static String rows(long count)
    {
        return count + (count == 1 ? " row" : " rows");
    }

    private static List<List<String>> keys(TableReport table)
    {
        return table.listed().stream().map(Difference::key).toList();
    }

    /** A delete's old row: the key's values (as text) in the key columns, the rest null. */
    private static Object[] keyRow(TableSchema schema, List<String> key)
    {
        Object[] row = new Object[schema.columnCount()];
        for (int i = 0; i < schema.keyColumnCount(); i++) {
            row[schema.keyIndex(i)] = key.get(i);
        }
        return row;
    }

    /**
     * The source's rows of {@code keys}, each a row of the source's schema with every value as its text
     * (null for SQL NULL), by key; keys the source lacks absent.
     */
    private static Map<List<String>, Object[]> readSource(Connection source, TablePair table, List<List<String>> keys)
            throws SQLException
    {
        ComparedSide side = table.source();
        TableSchema schema = table.schema();
        StringJoiner columns = new StringJoiner(", ");
        for (ColumnSchema column : schema.columns()) {
            columns.add(ComparedSide.text(column.name()));
        }
        Map<List<String>, Object[]> rows = new HashMap<>();
        int keyColumns = side.keyColumns().size();
        for (int from = 0; from < keys.size(); from += BATCH) {
            List<List<String>> batch = keys.subList(from, Math.min(keys.size(), from + BATCH));
            String query = "SELECT " + side.keyText() + ", " + columns + " FROM " + side.qualified() + " WHERE "
                    + side.keyIn(batch.size());
            try (PreparedStatement statement = source.prepareStatement(query)) {
                int index = 1;
                for (List<String> key : batch) {
                    for (String value : key) {
                        statement.setString(index++, value);
                    }
                }
                try (ResultSet result = statement.executeQuery()) {
                    while (result.next()) {
                        List<String> key = new ArrayList<>(keyColumns);
                        for (int i = 1; i <= keyColumns; i++) {
                            key.add(result.getString(i));
                        }
                        Object[] row = new Object[schema.columnCount()];
                        for (int i = 0; i < row.length; i++) {
                            row[i] = result.getString(keyColumns + 1 + i);
                        }
                        rows.put(key, row);
                    }
                }
            }
        }
        return rows;
    }

    /**
     * The repair's batches without positions: what the repair writes is no progress of the stream, whose
     * stored position stays where the service left it.
     */
    private record Unpositioned(MergeApplier applier)
            implements BatchApplier
    {
        @Override
        public void apply(Batch batch)
        {
            applier.apply(new Batch(batch.tables(), Map.of(), batch.events(), batch.rejected()));
        }

        @Override
        public boolean appendsHistory(TableId table)
        {
            return applier.appendsHistory(table);
        }

        @Override
        public Map<String, SourcePosition> committedPositions()
        {
            return Map.of();
        }

        @Override
        public void close()
        {
            // the repair closes the applier
        }
    }
}
