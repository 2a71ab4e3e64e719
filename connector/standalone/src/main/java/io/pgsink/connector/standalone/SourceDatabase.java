package io.pgsink.connector.standalone;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The source database as the Debezium properties describe it: how to connect with JDBC (for
 * {@code check} and tests) and which tables Debezium captures, read the way Debezium reads its
 * include and exclude lists (comma-separated regular expressions matched, whole and ignoring case,
 * against {@code schema} or {@code schema.table}).
 */
final class SourceDatabase
{
    private static final List<String> SYSTEM_SCHEMAS = List.of("pg_catalog", "information_schema", "pg_toast");

    private final Map<String, String> debezium;

    SourceDatabase(Map<String, String> debezium)
    {
        this.debezium = debezium;
    }

    String host()
    {
        return debezium.getOrDefault("database.hostname", "localhost");
    }

    int port()
    {
        return Integer.parseInt(debezium.getOrDefault("database.port", "5432"));
    }

    String database()
    {
        return debezium.getOrDefault("database.dbname", "postgres");
    }

    String user()
    {
        return debezium.getOrDefault("database.user", "postgres");
    }

    String slotName()
    {
        return debezium.getOrDefault("slot.name", "debezium");
    }

    String publicationName()
    {
        return debezium.getOrDefault("publication.name", "dbz_publication");
    }

    String publicationMode()
    {
        return debezium.getOrDefault("publication.autocreate.mode", "all_tables");
    }

    String jdbcUrl()
    {
        return "jdbc:postgresql://" + host() + ":" + port() + "/" + database();
    }

    Connection connect()
            throws SQLException
    {
        Properties properties = new Properties();
        properties.setProperty("user", user());
        String password = debezium.get("database.password");
        if (password != null) {
            properties.setProperty("password", password);
        }
        for (String key : List.of("sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword", "sslfactory")) {
            String value = debezium.get("database." + key);
            if (value != null) {
                properties.setProperty(key, value);
            }
        }
        properties.setProperty("ApplicationName", "pgsink check");
        properties.setProperty("connectTimeout", "10");
        return DriverManager.getConnection(jdbcUrl(), properties);
    }

    /** Whether Debezium captures {@code schema.table} with the configured include and exclude lists. */
    boolean captures(String schema, String table)
    {
        if (SYSTEM_SCHEMAS.contains(schema)) {
            return false;
        }
        String qualified = schema + "." + table;
        List<Pattern> schemaIncludes = patterns("schema.include.list");
        List<Pattern> schemaExcludes = patterns("schema.exclude.list");
        List<Pattern> tableIncludes = patterns("table.include.list");
        List<Pattern> tableExcludes = patterns("table.exclude.list");
        if (!schemaIncludes.isEmpty() && schemaIncludes.stream().noneMatch(pattern -> pattern.matcher(schema).matches())) {
            return false;
        }
        if (schemaExcludes.stream().anyMatch(pattern -> pattern.matcher(schema).matches())) {
            return false;
        }
        if (!tableIncludes.isEmpty() && tableIncludes.stream().noneMatch(pattern -> pattern.matcher(qualified).matches())) {
            return false;
        }
        return tableExcludes.stream().noneMatch(pattern -> pattern.matcher(qualified).matches());
    }

    private List<Pattern> patterns(String key)
    {
        String value = debezium.get(key);
        List<Pattern> patterns = new ArrayList<>();
        if (value == null || value.isBlank()) {
            return patterns;
        }
        for (String part : value.split(",")) {
            if (!part.isBlank()) {
                patterns.add(Pattern.compile(part.trim(), Pattern.CASE_INSENSITIVE));
            }
        }
        return patterns;
    }
}
