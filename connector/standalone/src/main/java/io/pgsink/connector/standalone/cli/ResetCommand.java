package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.connector.standalone.source.SourceTableWatch;
import io.pgsink.connector.standalone.source.TargetReadingStore;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.MergeApplier;
import io.pgsink.merge.session.TargetConnector;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Callable;

/**
 * {@code pgsink reset --config FILE}: the recovery when the source can no longer resume the sink
 * (its replication slot was dropped, or its stored position is gone from the server). It forgets
 * the positions stored for {@code sink.name} in the target's offsets table (and the source tables
 * stored with them, see {@link SourceTableWatch}) and drops the sink's
 * replication slot when it still exists, so that the next {@code pgsink run} loads every captured
 * table again (Debezium's snapshot; each target table is emptied in the transaction that loads its
 * first snapshot rows) and streams from there. Refuses while the slot is in use (a service still
 * streams). Exits 0 when done, 1 when it could not finish, 2 for an invalid configuration.
 */
@Command(name = "reset",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Forget the positions stored for sink.name and drop its replication slot, so that the next run "
                + "snapshots the source again.")
final class ResetCommand
        implements Callable<Integer>
{
    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE",
            description = "The same properties file as for run.")
    private Path config;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
    {
        StandaloneConfig parsed = StandaloneConfig.load(config, System.getenv());
        SourceDatabase source = new SourceDatabase(parsed.debezium());
        PrintWriter out = spec.commandLine().getOut();
        String slot = source.slotName();
        boolean dropped;
        try (Connection connection = source.connect()) {
            Integer activePid = activePid(connection, slot);
            if (activePid != null) {
                throw new SinkException(ErrorCode.TRANSIENT,
                        "The replication slot " + slot + " is in use by process " + activePid + " on "
                        + source.jdbcUrl()
                        + ": stop the pgsink service streaming with it, then run pgsink reset again");
            }
            dropped = dropSlot(connection, slot);
        }
        catch (SQLException e) {
            throw new SinkException(ErrorCode.TRANSIENT,
                    "Cannot reach the source " + source.jdbcUrl() + " as " + source.user() + ": "
                    + SqlFailures.describe(e), SqlFailures.sanitized(e));
        }
        int forgotten;
        try (MergeApplier applier = MergeApplier.builder(parsed.sink()).build()) {
            forgotten = applier.forgetPositions();
        }
        // the next run starts afresh: what it finds in the source catalog is its baseline
        try (TargetReadingStore readings = new TargetReadingStore(parsed.sink(),
                TargetConnector.fromConfig(parsed.sink()))) {
            readings.forget();
        }
        out.println("pgsink reset: " + (dropped ? "dropped replication slot " + slot : "replication slot " + slot
                + " did not exist")
                + "; forgot " + forgotten + " stored position(s) of sink " + parsed.sink().sinkName()
                + ". The next pgsink run snapshots every captured table and streams from there.");
        out.flush();
        return PgsinkCommand.EXIT_OK;
    }

    private static Integer activePid(Connection connection, String slot)
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT active_pid FROM pg_catalog.pg_replication_slots WHERE slot_name = "
                + "? AND active")) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next() ? rows.getInt(1) : null;
            }
        }
    }

    private static boolean dropSlot(Connection connection, String slot)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots WHERE slot_name = ? "
                        + "AND database = current_database()")) {
            statement.setString(1, slot);
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }
}
