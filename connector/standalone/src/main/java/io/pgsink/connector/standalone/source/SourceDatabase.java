package io.pgsink.connector.standalone.source;

import io.debezium.connector.postgresql.PostgresConnectorConfig.AutoCreateMode;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The source database as the Debezium properties describe it: how to connect with JDBC (for
 * {@code check} and tests). Which tables Debezium captures is {@link CapturedTables}.
 */
public final class SourceDatabase
{
    /** The service's key for Debezium's {@code slot.failover}. */
    public static final String FAILOVER_KEY = "source.slot.failover";
    private static final int FAILOVER_SLOTS_VERSION_NUM = 170000;

    private final Map<String, String> debezium;

    public SourceDatabase(Map<String, String> debezium)
    {
        this.debezium = debezium;
    }

    public String host()
    {
        return debezium.getOrDefault("database.hostname", "localhost");
    }

    public int port()
    {
        return Integer.parseInt(debezium.getOrDefault("database.port", "5432"));
    }

    public String database()
    {
        return debezium.getOrDefault("database.dbname", "postgres");
    }

    public String user()
    {
        return debezium.getOrDefault("database.user", "postgres");
    }

    public String slotName()
    {
        return debezium.getOrDefault("slot.name", "debezium");
    }

    /**
     * {@code slot.failover} (Debezium's key, {@code source.slot.failover} in the service): whether the
     * slot is created with {@code FAILOVER}, so that a PostgreSQL 17+ standby synchronizes it.
     */
    public boolean failoverSlot()
    {
        return Boolean.parseBoolean(debezium.getOrDefault("slot.failover", "false"));
    }

    /**
     * Why {@code source.slot.failover=true} cannot work on a server of {@code serverVersionNum}
     * ({@code server_version_num}), reading {@code serverVersion}; empty when it can or is not asked for.
     */
    public Optional<String> failoverProblem(int serverVersionNum, String serverVersion)
    {
        if (!failoverSlot() || serverVersionNum >= FAILOVER_SLOTS_VERSION_NUM) {
            return Optional.empty();
        }
        return Optional.of("Invalid value true for configuration " + FAILOVER_KEY
                + ": failover slots need PostgreSQL 17 or later,"
                + " the source " + host() + ":" + port() + " runs PostgreSQL " + serverVersion
                + " (remove " + FAILOVER_KEY + " or upgrade the source)");
    }

    public String publicationName()
    {
        return debezium.getOrDefault("publication.name", "dbz_publication");
    }

    /** {@code publication.autocreate.mode}, valid once the configuration is (Debezium checks it). */
    public AutoCreateMode publicationMode()
    {
        return AutoCreateMode.parse(debezium.getOrDefault("publication.autocreate.mode",
                AutoCreateMode.ALL_TABLES.getValue()));
    }

    /**
     * Whether the replication slot is listed on the server; with {@code created}, only once its
     * creation finished (a slot being created is listed already, without a confirmed position).
     */
    public boolean slotExists(Connection connection, boolean created)
            throws SQLException
    {
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_name = ?"
                + (created ? " AND confirmed_flush_lsn IS NOT NULL" : ""))) {
            statement.setString(1, slotName());
            try (ResultSet rows = statement.executeQuery()) {
                return rows.next();
            }
        }
    }

    /**
     * Drops the replication slot once no connection uses it, waiting up to {@code timeoutMillis}
     * for the connections of a run that just failed to let go of it; returns whether it was
     * dropped (false: it is gone already, or still in use).
     */
    public boolean dropSlotWhenIdle(long timeoutMillis)
            throws SQLException, InterruptedException
    {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try (Connection connection = connect("pgsink slot cleanup", false);
                PreparedStatement active = connection.prepareStatement("SELECT active FROM "
                        + "pg_catalog.pg_replication_slots WHERE slot_name = ?");
                PreparedStatement drop = connection.prepareStatement(
                        "SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots "
                                + "WHERE slot_name = ? AND NOT active")) {
            active.setString(1, slotName());
            drop.setString(1, slotName());
            while (true) {
                try (ResultSet rows = active.executeQuery()) {
                    if (!rows.next()) {
                        return false;
                    }
                    if (!rows.getBoolean(1)) {
                        try (ResultSet dropped = drop.executeQuery()) {
                            return dropped.next();
                        }
                    }
                }
                if (System.nanoTime() > deadline) {
                    return false;
                }
                // the server releases a slot when the backend of the closed replication connection exits
                Thread.sleep(100);
            }
        }
    }

    public String jdbcUrl()
    {
        return "jdbc:postgresql://" + host() + ":" + port() + "/" + database();
    }

    public Connection connect()
            throws SQLException
    {
        return connect("pgsink check", false);
    }

    /**
     * A connection named {@code applicationName}; with {@code replication}, one that speaks the
     * replication protocol ({@code replication=database}), for creating replication slots.
     */
    public Connection connect(String applicationName, boolean replication)
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
        properties.setProperty("ApplicationName", applicationName);
        if (replication) {
            properties.setProperty("replication", "database");
            properties.setProperty("assumeMinServerVersion", "9.4");
            properties.setProperty("preferQueryMode", "simple");
        }
        properties.setProperty("connectTimeout", "10");
        return DriverManager.getConnection(jdbcUrl(), properties);
    }
}
