package io.pgsink.merge.schema;

import io.pgsink.core.change.TableId;
import io.pgsink.core.change.TableSchema;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.TargetDialect;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.dialect.Dialect;
import io.pgsink.merge.table.Statements;
import io.pgsink.merge.table.TargetTable;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The target tables of an initial load, made ready before any row is copied: created from the source
 * schema and given missing columns under {@code schema.evolution=add-columns} (the DDL streaming
 * would run, {@link SchemaEvolution}), then read from the catalog. Each DDL step commits.
 */
public final class LoadTargets
{
    private LoadTargets() {}

    /** The dialect {@code setting} asks for on this connection's server. */
    public static Dialect dialect(Connection connection, TargetDialect setting)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT version()")) {
            rows.next();
            return Dialect.forSetting(setting, rows.getString(1));
        }
    }

    /**
     * The target table {@code target} of {@code source}, created or completed first when
     * {@code evolve}.
     *
     * @throws SinkException ({@link ErrorCode#SCHEMA_MISMATCH}) when it does not exist and may not be created
     */
    public static TargetTable prepare(Connection connection, Dialect dialect, TableId target, TableSchema source,
            boolean evolve)
            throws SQLException
    {
        return prepare(connection, dialect, target, source, evolve, ChangeMetadata.NONE);
    }

    /**
     * As {@link #prepare(Connection, Dialect, TableId, TableSchema, boolean)}, creating or completing
     * the metadata columns too; a history table is created without a primary key (see {@link HistoryTables}).
     */
    public static TargetTable prepare(Connection connection, Dialect dialect, TableId target, TableSchema source,
            boolean evolve, ChangeMetadata metadata)
            throws SQLException
    {
        Optional<TargetTable> found = TargetCatalog.read(connection, target, dialect);
        if (found.isEmpty() && evolve) {
            SchemaEvolution.execute(connection,
                    SchemaEvolution.createTable(target, source, dialect,
                            TargetCatalog.schemaExists(connection, target.schema()), metadata,
                    metadata.isHistory(source.table())));
            found = TargetCatalog.read(connection, target, dialect);
        }
        else if (found.isPresent() && evolve) {
            List<String> additions = new ArrayList<>(SchemaEvolution.addColumns(source, found.get()));
            additions.addAll(MetadataColumns.addColumns(metadata, found.get()));
            if (!additions.isEmpty()) {
                SchemaEvolution.execute(connection, additions);
                found = TargetCatalog.read(connection, target, dialect);
            }
        }
        return found.orElseThrow(() ->
                new SinkException(ErrorCode.SCHEMA_MISMATCH, "Target table " + target
                        + " does not exist (or the target user cannot see it)."
                + " Create it with the columns and primary key of " + source.table()
                + ", or set schema.evolution=add-columns to have pgsink create it."));
    }

    /**
     * The target table {@code target} as the catalog describes it, or empty when it does not exist;
     * changes nothing.
     */
    public static Optional<TargetTable> read(Connection connection, Dialect dialect, TableId target)
            throws SQLException
    {
        return TargetCatalog.read(connection, target, dialect);
    }

    /** Empties the tables, in the connection's transaction. */
    public static void truncate(Connection connection, List<TableId> tables)
            throws SQLException
    {
        if (tables.isEmpty()) {
            return;
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("TRUNCATE " + String.join(", ", tables.stream().map(Statements::qualified).toList()));
        }
    }
}
