package io.pgsink.merge.session;

import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.merge.session.TargetCheck.Finding;
import io.pgsink.merge.session.TargetCheck.Status;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * The privileges {@link TargetCheck} checks beyond those on the tables the sink writes: CREATE where
 * the sink will create a table or a schema, and the sink's own tables in {@code offsets.schema};
 * each failing finding names the GRANT (or CREATE SCHEMA) that fixes it, for the user the sink
 * connects as.
 *
 * <p>Not thread-safe: made for one run of a {@link TargetCheck}, whose findings it adds to.
 */
final class PrivilegeCheck
{
    private static final String TABLES = SinkConfig.TARGET_TABLE_NAME_FORMAT;

    private final SinkConfig sink;
    /** The user the sink connects as, quoted, named in the GRANT statements findings suggest. */
    private final String user;
    private final List<Finding> findings;

    PrivilegeCheck(SinkConfig sink, String user, List<Finding> findings)
    {
        this.sink = requireNonNull(sink, "sink is null");
        this.user = requireNonNull(user, "user is null");
        this.findings = requireNonNull(findings, "findings is null");
    }

    /**
     * {@code table} will be created: the user needs CREATE on its schema, or on the database when the schema is to be
     * created too.
     */
    void checkCreatable(Connection connection, TableId table, String what)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT (SELECT has_schema_privilege(n.oid, 'CREATE') FROM pg_catalog.pg_namespace n
                        WHERE n.nspname = ?),
                       has_database_privilege(current_database(), 'CREATE'), current_database()""")) {
            statement.setString(1, table.schema());
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                boolean mayCreateTable = rows.getBoolean(1);
                boolean schemaExists = !rows.wasNull();
                String schema = SqlIdentifiers.quote(table.schema());
                if (schemaExists && mayCreateTable) {
                    add(TABLES, Status.OK, what);
                }
                else if (schemaExists) {
                    add(TABLES, Status.FAIL, what + ", but the user may not create tables in schema " + table.schema()
                            + ": GRANT CREATE ON SCHEMA " + schema + " TO " + user);
                }
                else if (rows.getBoolean(2)) {
                    add(TABLES, Status.OK, what + ", in schema " + table.schema() + ", which will be created too");
                }
                else {
                    add(TABLES, Status.FAIL, what + ", but its schema " + table.schema()
                            + " does not exist and the user may not create it: CREATE SCHEMA " + schema
                            + " AUTHORIZATION " + user + ", or GRANT CREATE ON DATABASE "
                            + SqlIdentifiers.quote(rows.getString(3)) + " TO " + user);
                }
            }
        }
    }

    /**
     * The sink's other tables in {@code offsets.schema}: the dead-letter table (errors.tolerance=all)
     * and the adapter's; each missing one needs CREATE on the schema, each existing one the
     * privileges to read and write it.
     */
    void checkStateTables(Connection connection, List<String> stateTables)
            throws SQLException
    {
        List<String> names = new ArrayList<>(stateTables);
        if (sink.toleratesRejectedRows()) {
            names.add(sink.deadLetterTable());
        }
        List<String> missing = new ArrayList<>();
        List<String> refused = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT (SELECT has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE') FROM pg_catalog.pg_class c
                        JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?),
                       (SELECT has_schema_privilege(n.oid, 'CREATE') FROM pg_catalog.pg_namespace n
                        WHERE n.nspname = ?)""")) {
            for (String name : names) {
                statement.setString(1, sink.offsetsSchema());
                statement.setString(2, name);
                statement.setString(3, sink.offsetsSchema());
                try (ResultSet rows = statement.executeQuery()) {
                    rows.next();
                    boolean privileged = rows.getBoolean(1);
                    boolean exists = !rows.wasNull();
                    if (!exists && !rows.getBoolean(2)) {
                        missing.add(TableId.of(sink.offsetsSchema(), name).toString());
                    }
                    else if (exists && !privileged) {
                        refused.add(TableId.of(sink.offsetsSchema(), name).toString());
                    }
                }
            }
        }
        if (!missing.isEmpty()) {
            add(SinkConfig.OFFSETS_SCHEMA, Status.FAIL, "the sink's table(s) " + missing
                    + " are missing and the user may not create them in schema " + sink.offsetsSchema()
                    + ": GRANT CREATE ON SCHEMA " + SqlIdentifiers.quote(sink.offsetsSchema()) + " TO " + user);
        }
        for (String table : refused) {
            add(SinkConfig.OFFSETS_SCHEMA, Status.FAIL, "the sink's table " + table
                    + " exists but the user may not read and write it: GRANT SELECT, INSERT, UPDATE, DELETE ON "
                    + table + " TO " + user);
        }
    }

    /**
     * The GRANT statements that give {@code lacking} (table privileges, and {@code USAGE on schema s}) on {@code
     * table}.
     */
    String grants(TableId table, List<String> lacking)
    {
        List<String> onTable = new ArrayList<>();
        List<String> statements = new ArrayList<>();
        for (String privilege : lacking) {
            if (privilege.startsWith("USAGE")) {
                statements.add("GRANT USAGE ON SCHEMA " + SqlIdentifiers.quote(table.schema()) + " TO " + user);
            }
            else {
                onTable.add(privilege);
            }
        }
        if (!onTable.isEmpty()) {
            statements.add("GRANT " + String.join(", ", onTable) + " ON " + table + " TO " + user);
        }
        return String.join("; ", statements);
    }

    private void add(String key, Status status, String message)
    {
        findings.add(new Finding(status, key, message));
    }
}
