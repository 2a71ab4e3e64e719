package io.pgsink.merge;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.merge.session.TargetConnector;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;

import static io.pgsink.copy.sql.SqlIdentifiers.quote;
import static java.util.Objects.requireNonNull;

/**
 * A sink user that may not UPDATE: a role granted everything but UPDATE on the tables of a test
 * schema, which the sinks' sessions take ({@code SET ROLE}) through {@link #connector}. Tables the
 * suite creates in the schema get the grants by default privileges; tables of other schemas through
 * {@link #grantOn}. {@link #drop} removes what the role owns or was granted, then the role, once the
 * schema is gone.
 */
final class TestingRoleWithoutUpdate
{
    private final String role;

    private TestingRoleWithoutUpdate(String role)
    {
        this.role = requireNonNull(role, "role is null");
    }

    /** Creates the role, named after {@code schema}, with its privileges on the schema. */
    static TestingRoleWithoutUpdate create(TestingSchema schema)
            throws SQLException
    {
        String role = ("pgsink_no_update_" + schema.name()).toLowerCase(Locale.ROOT);
        schema.execute(
                "CREATE ROLE " + quote(role),
                "GRANT USAGE, CREATE ON SCHEMA " + quote(schema.name()) + " TO " + quote(role),
                "ALTER DEFAULT PRIVILEGES IN SCHEMA " + quote(schema.name()) + " GRANT SELECT, INSERT, DELETE, TRUNCATE ON TABLES TO " + quote(role));
        return new TestingRoleWithoutUpdate(role);
    }

    /** Grants the role everything but UPDATE on {@code table} (as SQL: plain, quoted or qualified) and USAGE on its schema. */
    void grantOn(TestingSchema schema, String table)
            throws SQLException
    {
        schema.execute("GRANT SELECT, INSERT, DELETE, TRUNCATE ON TABLE " + table + " TO " + quote(role),
                "DO $$ BEGIN EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', (SELECT n.nspname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = '"
                        + table.replace("'", "''") + "'::regclass), '" + role + "'); END $$");
    }

    /** {@code connector}, whose connections take the role. */
    TargetConnector connector(TargetConnector connector)
    {
        return () -> {
            Connection connection = connector.connect();
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET ROLE " + quote(role));
            }
            return connection;
        };
    }

    /** Drops what the role owns or was granted, then the role (the test schema is gone). */
    void drop(TestingPostgreSqlServer server)
    {
        try (Connection connection = server.connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP OWNED BY " + quote(role));
            statement.execute("DROP ROLE " + quote(role));
        }
        catch (SQLException e) {
            throw new IllegalStateException("Cannot drop role " + role, e);
        }
    }
}
