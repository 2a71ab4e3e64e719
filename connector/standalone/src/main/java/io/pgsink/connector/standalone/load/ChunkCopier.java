package io.pgsink.connector.standalone.load;

import io.pgsink.copy.load.CopyPipe;
import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.LoadProgressStore;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Queue;
import java.util.function.BooleanSupplier;

import static java.util.Objects.requireNonNull;

/**
 * One worker of an initial load: a source connection reading at the exported snapshot and a target
 * connection, copying chunks from the shared queue until it is empty. Each chunk is one target
 * transaction: the COPY of its rows and its row in the progress table, committed together, so the
 * target holds a chunk's rows exactly when the progress table says so.
 *
 * <p>Both connections print and read values in the same fixed styles ({@code DateStyle ISO},
 * {@code IntervalStyle postgres}, UTC, all float digits, hex bytea), so that text COPY carries
 * every value unchanged whatever the servers' defaults are.
 */
final class ChunkCopier
{
    static final String SESSION_SETTINGS = LoadSettings.SESSION_SETTINGS;

    private final LoadSettings.SourceConnector source;
    private final TargetConnector target;
    private final ExportedSnapshot snapshot;
    private final String snapshotText;
    private final LoadProgressStore progressStore;
    private final LoadProgressLog progress;
    private final LoadListener listener;

    ChunkCopier(LoadSettings.SourceConnector source, TargetConnector target, ExportedSnapshot snapshot,
            String snapshotText, LoadProgressStore progressStore, LoadProgressLog progress,
            LoadListener listener)
    {
        this.source = requireNonNull(source, "source is null");
        this.target = requireNonNull(target, "target is null");
        this.snapshot = requireNonNull(snapshot, "snapshot is null");
        this.snapshotText = requireNonNull(snapshotText, "snapshotText is null");
        this.progressStore = requireNonNull(progressStore, "progressStore is null");
        this.progress = requireNonNull(progress, "progress is null");
        this.listener = requireNonNull(listener, "listener is null");
    }

    /** A chunk of a table to copy. */
    record Chunk(LoadTable table, int index) {}

    /** Copies chunks from {@code queue} until it is empty or {@code stopping} says so. */
    void run(Queue<Chunk> queue, BooleanSupplier stopping)
            throws SQLException
    {
        CopyPipe pipe = new CopyPipe();
        try (Connection reader = source.connect("pgsink initial load", false); Connection writer = target.connect()) {
            settle(reader);
            snapshot.importInto(reader);
            settle(writer);
            writer.setAutoCommit(false);
            Chunk chunk;
            while (!stopping.getAsBoolean() && (chunk = queue.poll()) != null) {
                copy(pipe, reader, writer, chunk);
            }
            reader.commit();
        }
    }

    private void copy(CopyPipe pipe, Connection reader, Connection writer, Chunk chunk)
            throws SQLException
    {
        LoadTable table = chunk.table();
        try {
            CopyPipe.Result result = pipe.pipe(reader, table.copyOut(chunk.index()), writer, table.copyIn(),
                    bytes -> progress.bytesSent(table.id(), bytes));
            progressStore.chunkLoaded(writer, table.id(), chunk.index(), table.chunks(), result.rows(), result.bytes(),
                    snapshot.lsn(), snapshotText);
            writer.commit();
            progress.chunkLoaded(table.id(), result.rows());
            listener.chunkLoaded(table.id(), result.rows(), result.bytes());
        }
        catch (SQLException | RuntimeException e) {
            try {
                writer.rollback();
            }
            catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            if (e instanceof SQLException sql) {
                // the COPY line and column, never the value
                throw new SinkException(SqlFailures.classify(sql),
                        "Initial load of " + table.id() + " into " + table.target() + " failed in chunk "
                        + (chunk.index() + 1)
                        + " of " + table.chunks() + ": " + SqlFailures.describeCopy(sql), sql);
            }
            throw e;
        }
    }

    private static void settle(Connection connection)
            throws SQLException
    {
        connection.setAutoCommit(true);
        try (Statement statement = connection.createStatement()) {
            for (String setting : SESSION_SETTINGS.split("; ")) {
                statement.execute(setting);
            }
        }
    }
}
