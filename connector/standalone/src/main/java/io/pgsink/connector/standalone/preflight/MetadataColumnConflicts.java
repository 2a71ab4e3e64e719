package io.pgsink.connector.standalone.preflight;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.ChangeMetadata;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.mapping.ColumnSelection;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Metadata columns ({@code metadata.*.column}, {@code delete.*.column}) that a captured source
 * table writes already: the sink would write both the source's value and its own into one target
 * column, and the first flush of such a table fails. Found from the source catalog before anything
 * is created, by {@code check} and at the start of {@code run}, and reported as a configuration
 * problem of the metadata key (exit code 2).
 */
public final class MetadataColumnConflicts
{
    @Language("SQL")
    private static final String COLUMNS = """
            SELECT n.nspname, c.relname, a.attname
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p')
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
            ORDER BY n.nspname, c.relname, a.attnum""";
    /** How many tables a problem names; the count says how many more there are. */
    private static final int TABLES_NAMED = 5;

    private MetadataColumnConflicts() {}

    /**
     * Reads the captured source tables' columns and throws when a metadata column collides with
     * one; does nothing when no metadata column is configured or the source cannot be read (what
     * follows reports that in its own words).
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) naming every colliding key
     */
    public static void check(StandaloneConfig config)
    {
        if (config.sink().changeMetadata().columns().isEmpty()) {
            return;
        }
        Map<TableId, List<String>> written;
        try (Connection connection = new SourceDatabase(config.debezium()).connect()) {
            written = writtenColumns(config, connection);
        }
        catch (SQLException e) {
            // unreachable source: check reports it, run retries it
            return;
        }
        List<ConfigProblem> problems = problems(config, written);
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, ConfigProblem.describe("Invalid pgsink configuration", problems));
        }
    }

    /** One problem per metadata key whose column a captured table writes already. */
    static List<ConfigProblem> problems(StandaloneConfig config, Map<TableId, List<String>> writtenColumns)
    {
        List<ConfigProblem> problems = new ArrayList<>();
        for (ChangeMetadata.Column column : config.sink().changeMetadata().columns()) {
            List<TableId> tables = new ArrayList<>();
            writtenColumns.forEach((table, columns) -> {
                if (columns.contains(column.name())) {
                    tables.add(table);
                }
            });
            if (tables.isEmpty()) {
                continue;
            }
            ConfigKey<String> key = ChangeMetadata.key(column.kind());
            String named = tables.subList(0, Math.min(TABLES_NAMED, tables.size())).toString();
            problems.add(ConfigProblem.invalid(key.name(), column.name(), false, "captured source table"
                    + (tables.size() == 1 ? " " : "s ") + named
                    + (tables.size() > TABLES_NAMED ? " and " + (tables.size() - TABLES_NAMED) + " more" : "")
                    + " already " + (tables.size() == 1 ? "has" : "have") + " a column " + column.name()
                    + " that the sink writes; name a column no captured table has"
                    + " (or rename the source column with " + SinkConfig.COLUMN_RENAME + ")"));
        }
        return problems;
    }

    /** The target names of the columns the sink writes, of every captured table. */
    static Map<TableId, List<String>> writtenColumns(StandaloneConfig config, Connection connection)
            throws SQLException
    {
        Map<TableId, List<String>> written = new LinkedHashMap<>();
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(COLUMNS)) {
            while (rows.next()) {
                String schema = rows.getString(1);
                String table = rows.getString(2);
                if (config.capturedTables().captures(schema, table)) {
                    TableId id = TableId.of(schema, table);
                    written.computeIfAbsent(id, ignored -> new ArrayList<>()).addAll(writtenColumns(config, id,
                            List.of(rows.getString(3))));
                }
            }
        }
        return written;
    }

    /**
     * The target names of the columns of {@code table} the sink writes ({@code column.*}, the capture's column lists).
     */
    static List<String> writtenColumns(StandaloneConfig config, TableId table, List<String> columns)
    {
        ColumnSelection selection = config.sink().columnSelection();
        return columns.stream()
                .filter(column -> config.capturedTables().capturesColumn(table.schema(), table.table(), column)
                        && selection.writes(table, column))
                .map(column -> selection.targetName(table, column))
                .toList();
    }
}
