package io.pgsink.merge;

import io.pgsink.core.SinkConfig;
import org.junit.jupiter.api.BeforeAll;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

import static io.pgsink.copy.SqlIdentifiers.quote;

/**
 * The PostgreSQL suite ({@link MergeApplierIT}) applied by delete and insert rather than by
 * {@code MERGE}: what a target before PostgreSQL 15 gets, and one whose sink user may not UPDATE
 * its tables. The sinks' sessions take the role of a user granted everything but UPDATE on the
 * tables of the test schema.
 */
class DeleteInsertOnPostgreSqlIT
        extends MergeApplierIT
{
    private String role;

    @BeforeAll
    void createRoleWithoutUpdate()
            throws SQLException
    {
        role = ("pgsink_no_update_" + schema.name()).toLowerCase(Locale.ROOT);
        schema.execute(
                "CREATE ROLE " + quote(role),
                "GRANT USAGE, CREATE ON SCHEMA " + quote(schema.name()) + " TO " + quote(role),
                "ALTER DEFAULT PRIVILEGES IN SCHEMA " + quote(schema.name()) + " GRANT SELECT, INSERT, DELETE, TRUNCATE ON TABLES TO " + quote(role));
    }

    @Override
    protected void createTable(String name, String definitions, String... distributedBy)
            throws SQLException
    {
        super.createTable(name, definitions, distributedBy);
        // tables of other schemas than the test's
        schema.execute("GRANT SELECT, INSERT, DELETE, TRUNCATE ON TABLE " + name + " TO " + quote(role),
                "DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = '"
                        + name.replace("'", "''") + "'::regclass), '" + role + "'); END $$");
    }

    @Override
    protected void stopServer()
    {
        // the schema is gone: drop what else the role owns or was granted, then the role
        try (Connection connection = server().connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP OWNED BY " + quote(role));
            statement.execute("DROP ROLE " + quote(role));
        }
        catch (SQLException e) {
            throw new IllegalStateException("Cannot drop role " + role, e);
        }
    }

    @Override
    protected TargetConnector connector(SinkConfig config)
    {
        TargetConnector connector = super.connector(config);
        return () -> {
            Connection connection = connector.connect();
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET ROLE " + quote(role));
            }
            return connection;
        };
    }

    @Override
    public boolean suiteMayUpdate()
    {
        return false;
    }

    @Override
    protected boolean updatesInPlace()
    {
        return false;
    }
}
