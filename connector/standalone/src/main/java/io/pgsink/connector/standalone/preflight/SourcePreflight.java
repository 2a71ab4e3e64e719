package io.pgsink.connector.standalone.preflight;

import io.debezium.connector.postgresql.PostgresConnectorConfig.AutoCreateMode;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.engine.OffsetJson;
import io.pgsink.connector.standalone.load.SourceCatalog;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.connector.standalone.source.PublicationGaps;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.SourcePosition;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnSelection;
import org.intellij.lang.annotations.Language;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What the service checks on the source before it starts an engine, so that states Debezium
 * reports in its own terms (or not at all) stop the service with pgsink's message:
 * <ul>
 * <li>no table matches the include and exclude lists under
 *     {@code publication.autocreate.mode=filtered}: the same verdict as {@code pgsink check}'s
 *     ({@link CapturedTables#nothingCaptured});</li>
 * <li>the target stores positions for the sink but the replication slot is gone (dropped while the
 *     service was stopped): the changes since the stored position are lost to the slot; the
 *     message names slot and position and says how to recover ({@code pgsink reset}, then a new
 *     snapshot).</li>
 * <li>under {@code publication.autocreate.mode=filtered}, with positions stored, a captured table
 *     the publication lacks: created while the service streamed, its rows so far never streamed
 *     ({@link PublicationGaps});</li>
 * <li>the column selection ({@code column.*}) does not fit the captured tables: every problem,
 *     naming table and column, as a configuration error;</li>
 * <li>the slot lags behind the stored position (the service stopped between committing a batch
 *     and confirming it to the slot): confirmed up to it at once, so the server may free the WAL.</li>
 * </ul>
 * A source that cannot be reached is a {@link ErrorCode#TRANSIENT} failure (retried); one that
 * refuses the login, a privilege or the database, a {@link ErrorCode#CONFIG} one.
 */
public final class SourcePreflight
{
    private static final Logger log = LoggerFactory.getLogger(SourcePreflight.class);

    @Language("SQL")
    private static final String TABLES = """
            SELECT n.nspname, c.relname
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition""";

    private final StandaloneConfig config;
    private final SourceDatabase source;

    public SourcePreflight(StandaloneConfig config)
    {
        this.config = requireNonNull(config, "config is null");
        this.source = new SourceDatabase(config.debezium());
    }

    /**
     * @param stored the positions the target stores for the sink
     * @return whether the replication slot exists (else the engine creates it)
     * @throws SinkException when the engine should not start, saying why and what to do
     */
    public boolean check(Map<String, SourcePosition> stored)
    {
        try (Connection connection = source.connect()) {
            checkFailover(connection);
            if (source.publicationMode() == AutoCreateMode.FILTERED && !capturesAnyTable(connection)) {
                throw new SinkException(ErrorCode.CONFIG,
                        "Cannot stream from " + config.sourceDescription() + ": "
                        + CapturedTables.nothingCaptured(AutoCreateMode.FILTERED));
            }
            checkColumnSelection(connection);
            boolean slotExists = source.slotExists(connection, false);
            if (!stored.isEmpty() && !slotExists) {
                throw new SinkException(ErrorCode.CONFIG, missingSlot(stored.values()));
            }
            if (!stored.isEmpty() && source.publicationMode() == AutoCreateMode.FILTERED) {
                List<TableId> missing = PublicationGaps.missing(connection, config.capturedTables(),
                        source.publicationName());
                if (!missing.isEmpty()) {
                    throw new SinkException(ErrorCode.CONFIG, PublicationGaps.message(missing,
                            source.publicationName()));
                }
            }
            for (SourcePosition position : stored.values()) {
                confirmUpTo(connection, position);
            }
            return slotExists;
        }
        catch (SQLException e) {
            String context = "Cannot check the source " + config.sourceDescription() + " as " + source.user();
            Optional<String> remedy = SqlFailures.remedy(e, "source.database.user", "source.database.password",
                    "source.database.dbname");
            if (remedy.isPresent()) {
                throw SqlFailures.translate(e, ErrorCode.CONFIG, context, ". What to do: " + remedy.get());
            }
            // unreachable or restarting: the service retries
            throw SqlFailures.translate(e, ErrorCode.TRANSIENT, context);
        }
    }

    /** {@code source.slot.failover=true} needs PostgreSQL 17+: refused on an older source. */
    private void checkFailover(Connection connection)
            throws SQLException
    {
        if (!source.failoverSlot()) {
            return;
        }
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery(
                        "SELECT current_setting('server_version_num')::int, current_setting('server_version')")) {
            rows.next();
            Optional<String> problem = source.failoverProblem(rows.getInt(1), rows.getString(2));
            if (problem.isPresent()) {
                throw new SinkException(ErrorCode.CONFIG, problem.get());
            }
        }
    }

    /**
     * Before {@code run} starts the service: {@code source.slot.failover=true} on a source older than
     * PostgreSQL 17 is a configuration error (exit 2), like an invalid value. A source out of reach
     * is left to the service, which waits for it and checks again.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) naming the key and the server's version
     */
    public void checkFailoverAtStart()
    {
        if (!source.failoverSlot()) {
            return;
        }
        try (Connection connection = source.connect()) {
            checkFailover(connection);
        }
        catch (SQLException e) {
            log.debug("cannot read the version of the source {} before starting: {}", config.sourceDescription(),
                    e.getMessage());
        }
    }

    /**
     * After the initial load, before Debezium starts: under {@code publication.autocreate.mode=filtered},
     * a captured table created while the load ran is not in the publication the load made, and the
     * rows written into it so far were not decoded ({@link PublicationGaps}).
     *
     * @throws SinkException when such a table exists
     */
    public void checkPublicationAfterLoad()
    {
        if (source.publicationMode() != AutoCreateMode.FILTERED) {
            return;
        }
        try (Connection connection = source.connect()) {
            List<TableId> missing = PublicationGaps.missing(connection, config.capturedTables(),
                    source.publicationName());
            if (!missing.isEmpty()) {
                throw new SinkException(ErrorCode.CONFIG, PublicationGaps.message(missing, source.publicationName()));
            }
        }
        catch (SQLException e) {
            throw SqlFailures.translate(e, ErrorCode.TRANSIENT,
                    "Cannot check publication " + source.publicationName() + " on the source "
                    + config.sourceDescription());
        }
    }

    /**
     * Checks {@code column.include.list}, {@code column.exclude.list} and {@code column.rename}
     * against the captured tables as the source catalog describes them, every problem at once.
     */
    private void checkColumnSelection(Connection connection)
            throws SQLException
    {
        ColumnSelection selection = config.sink().columnSelection();
        if (selection.isEmpty()) {
            return;
        }
        List<ConfigProblem> problems = selection.problems(SourceCatalog.schemas(connection,
                config.loadSettings().captured()));
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG,
                    ConfigProblem.describe("Invalid column selection for the tables captured from "
                    + config.sourceDescription(), problems));
        }
    }

    /**
     * Confirms the slot up to {@code position} when it lags behind (the service stopped between
     * committing a batch in the target and confirming it to the slot), so that the server may free
     * the WAL before it now rather than when the next change is applied. Skipped while the slot is
     * in use; a failure only costs the early confirmation, and is logged.
     */
    private void confirmUpTo(Connection connection, SourcePosition position)
    {
        Optional<Long> lsn = confirmableLsn(position.offset());
        if (lsn.isEmpty()) {
            return;
        }
        String target = lsnText(lsn.get());
        try (PreparedStatement lagging = connection.prepareStatement(
                "SELECT confirmed_flush_lsn FROM pg_catalog.pg_replication_slots WHERE slot_name = ? AND NOT active "
                        + "AND confirmed_flush_lsn < ?::pg_lsn")) {
            lagging.setString(1, source.slotName());
            lagging.setString(2, target);
            String confirmed;
            try (ResultSet rows = lagging.executeQuery()) {
                if (!rows.next()) {
                    return;
                }
                confirmed = rows.getString(1);
            }
            try (PreparedStatement advance =
                    connection.prepareStatement("SELECT pg_replication_slot_advance(?, ?::pg_lsn)")) {
                advance.setString(1, source.slotName());
                advance.setString(2, target);
                advance.execute();
            }
            log.info("{} - confirmed replication slot {} up to the position stored in the target, {} (it was at {})",
                    config.sink().sinkName(), source.slotName(), target, confirmed);
        }
        catch (SQLException e) {
            log.warn("{} - cannot confirm replication slot {} up to the stored position {} before streaming; it is "
                    + "confirmed with the next change applied: {}",
                    config.sink().sinkName(), source.slotName(), target, SqlFailures.describe(e));
        }
    }

    private String missingSlot(Collection<SourcePosition> stored)
    {
        StringBuilder positions = new StringBuilder();
        for (SourcePosition position : stored) {
            positions.append(positions.isEmpty() ? "" : ", ").append(describe(position));
        }
        return "The replication slot " + source.slotName() + " does not exist in " + source.jdbcUrl()
                + ", but the target stores position " + positions
                + " for sink " + config.sink().sinkName()
                        + ": the changes since then are lost to the slot (was it dropped while pgsink was stopped?)."
                + " To recover, load the tables again: run `pgsink reset --config FILE` (it forgets the stored "
                        + "positions), then `pgsink run`,"
                + " which snapshots every captured table again (each target table is emptied in the transaction that "
                        + "loads its first snapshot rows)";
    }

    /** The stored offset, with its LSN in PostgreSQL's notation when it has one. */
    static String describe(SourcePosition position)
    {
        try {
            Map<String, Object> offset = OffsetJson.readMap(position.offset());
            if (offset.get("lsn") instanceof Number lsn) {
                long value = lsn.longValue();
                return "lsn " + Long.toHexString(value >>> 32).toUpperCase() + "/"
                        + Long.toHexString(value & 0xFFFFFFFFL).toUpperCase() + " (" + position.offset() + ")";
            }
        }
        catch (IllegalArgumentException ignored) {
            // not JSON: shown as it is
        }
        return position.offset();
    }

    /**
     * The LSN a stored Debezium offset lets the slot be confirmed up to, as Debezium itself
     * confirms it when it commits an offset: the commit LSN of the last transaction processed
     * whole ({@code lsn_commit}), else the last event processed ({@code lsn_proc}, then {@code lsn}).
     * Every transaction committing after it is still sent by the server.
     */
    static Optional<Long> confirmableLsn(String offset)
    {
        Map<String, Object> fields;
        try {
            fields = OffsetJson.readMap(offset);
        }
        catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        for (String key : new String[] {"lsn_commit", "lsn_proc", "lsn"}) {
            if (fields.get(key) instanceof Number lsn) {
                return Optional.of(lsn.longValue());
            }
        }
        return Optional.empty();
    }

    /** {@code 1/3E1643C8}, as PostgreSQL writes an LSN. */
    static String lsnText(long lsn)
    {
        return Long.toHexString(lsn >>> 32).toUpperCase(Locale.ROOT) + "/"
                + Long.toHexString(lsn & 0xFFFFFFFFL).toUpperCase(Locale.ROOT);
    }

    private boolean capturesAnyTable(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(TABLES)) {
            while (rows.next()) {
                if (config.capturedTables().captures(rows.getString(1), rows.getString(2))) {
                    return true;
                }
            }
        }
        return false;
    }
}
