package io.pgsink.connector.standalone.source;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.schema.LoadTargets;
import io.pgsink.merge.session.TargetConnector;
import io.pgsink.merge.state.SourceTableStore;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The {@link ReadingStore} in the target's {@link SourceTableStore} table, on a connection of its
 * own, opened when first needed and again after a failure. Creates the table when first opened.
 *
 * <p>Not thread-safe: {@link SourceTableWatch} calls it under its lock.
 */
public final class TargetReadingStore
        implements ReadingStore
{
    private static final Logger log = LoggerFactory.getLogger(TargetReadingStore.class);

    private final SinkConfig config;
    private final TargetConnector connector;
    private final SourceTableStore store;
    @Nullable
    private Connection connection;

    public TargetReadingStore(SinkConfig config, TargetConnector connector)
    {
        this.config = requireNonNull(config, "config is null");
        this.connector = requireNonNull(connector, "connector is null");
        this.store = new SourceTableStore(config);
    }

    @Override
    public Optional<SourceTables> load()
    {
        List<SourceTableStore.StoredTable> rows = call("read the source tables stored in", store::read);
        if (rows.isEmpty()) {
            return Optional.empty();
        }
        Map<Long, SourceTables.Table> tables = new HashMap<>();
        for (SourceTableStore.StoredTable row : rows) {
            tables.put(row.oid(), new SourceTables.Table(row.oid(), row.name(), row.partitioned(), row.parentOid(),
                    row.bound().orElse(null), row.identityWithoutKey()));
        }
        return Optional.of(new SourceTables(tables));
    }

    @Override
    public void store(SourceTables captured)
    {
        List<SourceTableStore.StoredTable> rows = captured.byOid().values().stream()
                .sorted(Comparator.comparingLong(SourceTables.Table::oid))
                .map(table -> new SourceTableStore.StoredTable(table.oid(), table.name(), table.partitioned(),
                        table.parent(), Optional.ofNullable(table.bound()),
                        table.identityWithoutKey()))
                .toList();
        call("store the source tables read in", connection -> {
            store.replace(connection, rows);
            connection.commit();
            return null;
        });
    }

    /** Forgets this sink's stored reading ({@code pgsink reset}); returns the tables it held. */
    public int forget()
    {
        return call("delete the source tables stored in", connection -> {
            int forgotten = store.clear(connection);
            connection.commit();
            return forgotten;
        });
    }

    @Override
    public boolean targetRenamed(TableId from, TableId to)
    {
        return call("look up target tables " + from + " and " + to + " in",
                connection -> !SourceTableStore.targetTableExists(connection,
                        from) && SourceTableStore.targetTableExists(connection, to));
    }

    @Override
    public Optional<String> forgetStatement(TableId sourceTable)
    {
        return Optional.of(store.forgetStatement(sourceTable));
    }

    @FunctionalInterface
    private interface Work<T>
    {
        T run(Connection connection)
                throws SQLException;
    }

    private <T> T call(String what, Work<T> work)
    {
        try {
            if (connection == null || connection.isClosed()) {
                connection = connector.connect();
                connection.setAutoCommit(false);
                store.createTable(connection, LoadTargets.dialect(connection, config.targetDialect()));
            }
            T result = work.run(connection);
            // ends the read's transaction too: the next reading sees the catalog anew
            connection.commit();
            return result;
        }
        catch (SQLException e) {
            close();
            throw SqlFailures.translate(e,
                    "Cannot " + what + " " + store.qualifiedTable() + " for sink " + config.sinkName());
        }
    }

    @Override
    public void close()
    {
        if (connection != null) {
            try {
                connection.close();
            }
            catch (SQLException e) {
                log.debug("{} - closing the stored source tables' target connection failed: {}", config.sinkName(),
                        e.toString());
            }
            connection = null;
        }
    }
}
