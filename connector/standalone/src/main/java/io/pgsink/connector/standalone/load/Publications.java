package io.pgsink.connector.standalone.load;

import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.StringJoiner;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;

/**
 * Creates the publication before the load's replication slot, the way Debezium would create it
 * later ({@code publication.autocreate.mode}). It must exist first: pgoutput looks publications up
 * as of each change it decodes, and fails on changes older than the publication.
 */
final class Publications
{
    private Publications() {}

    static void ensure(Connection connection, LoadSettings settings)
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT 1 FROM pg_catalog.pg_publication WHERE pubname = ?")) {
            statement.setString(1, settings.publicationName());
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    return;
                }
            }
        }
        String create = "CREATE PUBLICATION " + quote(settings.publicationName());
        switch (settings.publicationAutoCreate()) {
            case "all_tables" -> create += " FOR ALL TABLES";
            case "filtered" -> {
                List<SourceTable> tables = SourceCatalog.read(connection, settings.captured());
                if (!tables.isEmpty()) {
                    StringJoiner list = new StringJoiner(", ", " FOR TABLE ", "");
                    tables.forEach(table -> list.add(quote(table.schema().table().schema()) + "."
                            + quote(table.schema().table().table())));
                    create += list;
                }
            }
            case "no_tables" -> {
            }
            default -> throw new SinkException(ErrorCode.CONFIG,
                    "Publication " + settings.publicationName()
                    + " does not exist and source.publication.autocreate.mode="
                    + settings.publicationAutoCreate() + " says not to create it: create it before the initial load");
        }
        if (settings.captured().viaPartitionRoot()) {
            // as Debezium creates it with publish.via.partition.root: a partition's changes carry its root's name
            create += " WITH (publish_via_partition_root = true)";
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute(create);
        }
    }
}
