package io.pgsink.connector.standalone.source;

import io.pgsink.core.change.TableId;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Captured tables missing from an existing publication of chosen tables: with
 * {@code publication.autocreate.mode=filtered}, Debezium puts the tables that match the include list
 * into the publication when it starts, not while it streams, so a table created (or dropped and
 * created again) since the last start is missing, and the rows written into it so far were never
 * streamed. Debezium would add it at this start and stream it from now on: those rows would be lost.
 * Only permanent tables that are not partitions are looked at: a publication lists partitions or
 * their root depending on {@code publish_via_partition_root}, so partitioned tables are left out.
 */
public final class PublicationGaps
{
    @Language("SQL")
    private static final String MISSING = """
            SELECT n.nspname, c.relname
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            JOIN pg_catalog.pg_publication p ON p.pubname = ? AND NOT p.puballtables
            WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND NOT c.relispartition
                AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
              AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_publication_tables t WHERE t.pubname = p.pubname
                  AND t.schemaname = n.nspname AND t.tablename = c.relname)
            ORDER BY 1, 2""";

    private PublicationGaps() {}

    /** The captured tables the publication lacks; none when it does not exist or publishes all tables. */
    public static List<TableId> missing(Connection connection, CapturedTables captured, String publication)
            throws SQLException
    {
        List<TableId> missing = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(MISSING)) {
            statement.setString(1, publication);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    if (captured.captures(rows.getString(1), rows.getString(2))) {
                        missing.add(TableId.of(rows.getString(1), rows.getString(2)));
                    }
                }
            }
        }
        return missing;
    }

    /** Why the service does not start, and what to do. */
    public static String message(List<TableId> missing, String publication)
    {
        return "Table(s) " + missing + " match the captured tables but are not in publication " + publication
                + ": they were created (or created again) while pgsink loaded or streamed"
                + " with source.publication.autocreate.mode=filtered, which adds tables to the publication only when "
                        + "Debezium starts, so the rows written into them so far were never streamed"
                + " and would be lost. Either load every table again (`pgsink reset --config FILE`, then `pgsink "
                        + "run`), or add them to the publication"
                + " (ALTER PUBLICATION " + publication
                        + " ADD TABLE ...), copy their rows into the target yourself, and start again."
                + " To capture tables created while streaming from their first row, use a publication FOR ALL TABLES "
                        + "(source.publication.autocreate.mode=all_tables, needs a superuser)";
    }
}
