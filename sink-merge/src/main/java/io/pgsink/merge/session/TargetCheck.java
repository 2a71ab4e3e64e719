package io.pgsink.merge.session;

import io.pgsink.copy.sql.SqlFailures;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SessionReplicationRole;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.TargetDialect;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * What a sink needs of its target before it writes, checked in one go: the target answers the
 * login; the user may create the staging tables (TEMPORARY); the offsets table exists with the
 * privileges the flush needs, or may be created; and each target table the sink will write exists
 * with the source's columns, a primary key and the privileges the flush needs, or, with
 * {@code schema.evolution=add-columns}, will be created. Shared by {@code pgsink check} and the
 * Kafka Connect connector's {@code validate}; each {@link Finding} names the configuration key it
 * is about, so that an adapter can report it on that key. The privileges to create tables and
 * schemas, and those on the sink's own tables, are {@link PrivilegeCheck}'s.
 *
 * <p>Not thread-safe: one run at a time.
 */
public final class TargetCheck
{
    public enum Status
    {
        OK,
        WARN,
        FAIL,
    }

    /** One verdict, about the setting {@code key}. */
    public record Finding(Status status, String key, String message)
    {
        public Finding
        {
            requireNonNull(status, "status is null");
            requireNonNull(key, "key is null");
            requireNonNull(message, "message is null");
        }
    }

    /**
     * A target table the sink will write, the source table it is written from when known (for
     * messages), and the source's columns (empty when unknown: their presence is then not checked).
     */
    public record Table(TableId target, Optional<TableId> source, List<String> sourceColumns)
    {
        public Table
        {
            requireNonNull(target, "target is null");
            requireNonNull(source, "source is null");
            sourceColumns = List.copyOf(sourceColumns);
        }
    }

    private static final String OFFSETS = SinkConfig.OFFSETS_TABLE;
    private static final String TABLES = SinkConfig.TARGET_TABLE_NAME_FORMAT;

    @Language("SQL")
    private static final String TARGET_TABLE = """
            SELECT c.oid,
                   EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),
                   has_table_privilege(c.oid, 'INSERT'), has_table_privilege(c.oid, 'DELETE'),
                   has_table_privilege(c.oid, 'SELECT'), has_table_privilege(c.oid, 'TRUNCATE'),
                   has_schema_privilege(n.oid, 'USAGE'), has_table_privilege(c.oid, 'UPDATE'),
                   current_setting('server_version_num')::int >= 150000,
                   pg_catalog.pg_has_role(c.relowner, 'USAGE')
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = ? AND c.relname = ? AND c.relkind IN ('r', 'p')""";

    @Language("SQL")
    private static final String COLUMNS = """
            SELECT a.attname
            FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = ? AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum""";

    private final SinkConfig sink;
    private final String noPositionsYet;
    private final boolean initialLoad;
    private final List<String> stateTables;
    /**
     * Whether creating tables, adding columns and the adapter's state tables are checked too, and the GRANT that fixes
     * a finding is named.
     */
    private final boolean privileges;
    private final List<Finding> findings = new ArrayList<>();
    /** The user the sink connects as, named in the GRANT statements findings suggest. */
    private String user = "<the sink's user>";
    // whether the adapter starts with an initial load, which empties every target table with TRUNCATE first
    private boolean initialLoadPending;

    /**
     * @param noPositionsYet what follows "nothing stored for sink X yet" in the finding about an
     *         offsets table without positions of the sink: what the adapter then does
     * @param initialLoad whether the adapter, with no positions stored, starts with an initial
     *         load that empties every target table with TRUNCATE (which the user then needs)
     */
    public TargetCheck(SinkConfig sink, String noPositionsYet, boolean initialLoad)
    {
        this(sink, noPositionsYet, initialLoad, List.of(), false);
    }

    /**
     * A check of every privilege the sink will use, each failing finding naming the GRANT (or
     * ALTER) that fixes it: besides what the other constructor's check covers, CREATE on the schema
     * (or the database) of each table the sink will create, ownership of each table it will add
     * columns to, and the sink's tables in {@code offsets.schema}.
     *
     * @param stateTables the adapter's tables in {@code offsets.schema} besides the offsets and
     *         dead-letter tables, which it creates when missing (the standalone service's source
     *         table readings and initial-load progress)
     */
    public TargetCheck(SinkConfig sink, String noPositionsYet, boolean initialLoad, List<String> stateTables)
    {
        this(sink, noPositionsYet, initialLoad, stateTables, true);
    }

    private TargetCheck(SinkConfig sink, String noPositionsYet, boolean initialLoad, List<String> stateTables,
            boolean privileges)
    {
        this.privileges = privileges;
        this.sink = requireNonNull(sink, "sink is null");
        this.noPositionsYet = requireNonNull(noPositionsYet, "noPositionsYet is null");
        this.initialLoad = initialLoad;
        this.stateTables = List.copyOf(stateTables);
    }

    /**
     * Connects and checks; a target that cannot be reached or refuses the login is one {@link Status#FAIL} on the key
     * to fix.
     */
    public List<Finding> run(List<Table> tables)
    {
        findings.clear();
        initialLoadPending = false;
        try (Connection connection = TargetConnector.fromConfig(sink, SessionReplicationRole.ORIGIN).connect()) {
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT current_user, version()")) {
                rows.next();
                user = SqlIdentifiers.quote(rows.getString(1));
                add(SinkConfig.TARGET_URL, Status.OK, "connected as " + rows.getString(1) + " to " + rows.getString(2));
            }
            Optional<String> roleProblem = SessionReplicationRoles.problem(connection, sink.sessionReplicationRole());
            if (roleProblem.isPresent()) {
                add(SinkConfig.TARGET_SESSION_REPLICATION_ROLE, Status.FAIL, roleProblem.get());
            }
            else if (sink.sessionReplicationRole() == SessionReplicationRole.REPLICA) {
                add(SinkConfig.TARGET_SESSION_REPLICATION_ROLE, Status.OK, "the user may set session_replication_role "
                        + "= replica (target.session.replication.role): ordinary triggers, rules and foreign-key "
                        + "checks do not fire on applied changes");
            }
            add(SinkConfig.TARGET_TOAST_COMPRESSION, Status.OK,
                    ToastCompressions.describe(sink.toastCompression(), ToastCompressions.lz4(connection)));
            try (Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT has_database_privilege(current_database(), "
                            + "'TEMPORARY'), current_database(), current_user")) {
                rows.next();
                if (!rows.getBoolean(1)) {
                    // every flush stages its rows in temporary tables
                    add(SinkConfig.TARGET_USER, Status.FAIL, "the user lacks the TEMPORARY privilege on database "
                            + rows.getString(2) + ", needed for the staging tables of each flush: GRANT "
                            + "TEMPORARY ON DATABASE "
                            + rows.getString(2) + " TO " + rows.getString(3));
                }
            }
            checkOffsetsTable(connection);
            PrivilegeCheck privilegeCheck = new PrivilegeCheck(sink, user, findings);
            if (privileges) {
                privilegeCheck.checkStateTables(connection, stateTables);
            }
            for (Table table : tables) {
                checkTargetTable(connection, table, privilegeCheck);
            }
        }
        catch (SQLException e) {
            add(keyOf(e), Status.FAIL, "cannot connect or query: " + e.getMessage() + " (SQLState " + e.getSQLState()
                    + ")"
                    + SqlFailures.remedy(e, SinkConfig.TARGET_USER, SinkConfig.TARGET_PASSWORD, SinkConfig.TARGET_URL)
                    .map(remedy -> ". What to do: " + remedy).orElse(""));
        }
        return List.copyOf(findings);
    }

    /** The setting to fix for a failure to connect: the login's for a refused login, else the URL. */
    private static String keyOf(SQLException e)
    {
        String state = e.getSQLState();
        if ("28P01".equals(state)) {
            return SinkConfig.TARGET_PASSWORD;
        }
        if (state != null && state.startsWith("28")) {
            return SinkConfig.TARGET_USER;
        }
        return SinkConfig.TARGET_URL;
    }

    private void checkOffsetsTable(Connection connection)
            throws SQLException
    {
        String offsets = TableId.of(sink.offsetsSchema(), sink.offsetsTable()).toString();
        try (PreparedStatement statement = connection.prepareStatement(
                "SELECT c.oid, has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE') FROM pg_catalog.pg_class c JOIN "
                + "pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?")) {
            statement.setString(1, sink.offsetsSchema());
            statement.setString(2, sink.offsetsTable());
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    if (!rows.getBoolean(2)) {
                        add(OFFSETS, Status.FAIL, "offsets table " + offsets
                                + " exists but the user may not SELECT, INSERT and UPDATE it"
                                + grant(": GRANT SELECT, INSERT, UPDATE, DELETE ON " + offsets + " TO " + user));
                        return;
                    }
                    try (PreparedStatement positions = connection.prepareStatement("SELECT count(*) FROM " + offsets
                            + " WHERE sink_name = ?")) {
                        positions.setString(1, sink.sinkName());
                        try (ResultSet count = positions.executeQuery()) {
                            count.next();
                            long stored = count.getLong(1);
                            initialLoadPending = stored == 0 && initialLoad;
                            add(OFFSETS, Status.OK, "offsets table " + offsets + " exists" + (stored == 0
                                    ? "; nothing stored for sink " + sink.sinkName() + " yet" + noPositionsYet
                                    : " with " + stored + " stored position(s) of sink " + sink.sinkName()
                                    + ": streaming resumes there"));
                        }
                    }
                    return;
                }
            }
        }
        initialLoadPending = initialLoad;
        try (PreparedStatement statement = connection.prepareStatement("SELECT has_schema_privilege(?, 'CREATE')")) {
            statement.setString(1, sink.offsetsSchema());
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                add(OFFSETS, rows.getBoolean(1) ? Status.OK : Status.FAIL, "offsets table " + offsets
                        + (rows.getBoolean(1) ? " will be created"
                        : " is missing and the user may not create it in schema " + sink.offsetsSchema()
                                + grant(": GRANT CREATE ON SCHEMA " + SqlIdentifiers.quote(sink.offsetsSchema())
                                + " TO " + user)));
            }
        }
        catch (SQLException e) {
            add(SinkConfig.OFFSETS_SCHEMA, Status.FAIL, "offsets table " + offsets + " is missing and its schema "
                    + sink.offsetsSchema() + " does not exist");
        }
    }

    private void checkTargetTable(Connection connection, Table table, PrivilegeCheck privilegeCheck)
            throws SQLException
    {
        TableId target = table.target();
        String name = "table " + target + table.source().filter(source -> !source.equals(target))
                .map(source -> " (for " + source + ")").orElse("");
        try (PreparedStatement statement = connection.prepareStatement(TARGET_TABLE)) {
            statement.setString(1, target.schema());
            statement.setString(2, target.table());
            try (ResultSet rows = statement.executeQuery()) {
                boolean evolves = sink.evolvesSchema();
                if (!rows.next()) {
                    if (evolves && !privileges) {
                        add(TABLES, Status.OK, name + " does not exist yet and will be created from the source table "
                                + "(schema.evolution=add-columns)");
                    }
                    else if (evolves) {
                        privilegeCheck.checkCreatable(connection, target, name
                                + " does not exist yet and will be created from the source table "
                                + "(schema.evolution=add-columns)");
                    }
                    else {
                        add(TABLES, Status.FAIL, name + " does not exist: create it with the source table's columns "
                                + "and primary key, or set schema.evolution=add-columns");
                    }
                    return;
                }
                Set<String> missing = new LinkedHashSet<>(table.sourceColumns());
                missing.removeAll(columns(connection, rows.getLong(1)));
                List<String> problems = new ArrayList<>();
                if (!missing.isEmpty() && evolves && privileges && !rows.getBoolean(10)) {
                    problems.add("lacks source column(s) " + missing
                            + ", which schema.evolution=add-columns would add, but only the table's owner may (ALTER "
                            + "TABLE ... ADD COLUMN):"
                            + " ALTER TABLE " + target + " OWNER TO " + user + ", or add the columns yourself");
                }
                else if (!missing.isEmpty() && evolves) {
                    add(TABLES, Status.OK, name + " lacks source column(s) " + missing
                            + ", which will be added (schema.evolution=add-columns)");
                }
                else if (!missing.isEmpty()) {
                    problems.add("lacks source column(s) " + missing
                            + " (add them, or set schema.evolution=add-columns)");
                }
                if (!rows.getBoolean(2) && !sink.appendOnlyWithoutKey()) {
                    problems.add("has no primary key");
                }
                List<String> lacking = new ArrayList<>();
                if (!rows.getBoolean(7)) {
                    lacking.add("USAGE on schema " + target.schema());
                }
                if (!rows.getBoolean(5)) {
                    lacking.add("SELECT");
                }
                if (!rows.getBoolean(3)) {
                    lacking.add("INSERT");
                }
                if (!rows.getBoolean(4)) {
                    lacking.add("DELETE");
                }
                if (!rows.getBoolean(6) && initialLoadPending) {
                    lacking.add("TRUNCATE");
                }
                if (!lacking.isEmpty()) {
                    problems.add("lacks the privilege(s) " + String.join(", ", lacking)
                            + " (the sink needs SELECT, INSERT and DELETE on the table and USAGE on its schema"
                            + (initialLoadPending ? "; the initial load, which runs first, empties the table with "
                            + "TRUNCATE" : "") + ")" + grant(": " + privilegeCheck.grants(target, lacking)));
                }
                if (!problems.isEmpty()) {
                    add(TABLES, Status.FAIL, name + " " + String.join(", ", problems));
                }
                else if (!rows.getBoolean(6)) {
                    add(TABLES, Status.WARN, name + " is ready, but the user may not TRUNCATE it, so a source "
                            + "truncate would fail");
                }
                else if (!rows.getBoolean(8) && rows.getBoolean(9) && sink.targetDialect() != TargetDialect.GREENPLUM) {
                    add(TABLES, Status.WARN, name + " is ready, but the user may not UPDATE it, so flushes delete and "
                            + "re-insert changed rows instead of merging them in place (slower): GRANT UPDATE ON "
                            + name + " TO <the sink's user>");
                }
                else {
                    add(TABLES, Status.OK, name + " is ready");
                }
            }
        }
    }

    /** {@code text} (a GRANT statement, after a colon) when findings name their GRANT, else nothing. */
    private String grant(String text)
    {
        return privileges ? text : "";
    }

    /** The columns of the relation {@code oid} of {@code connection}'s database, in order (dropped ones left out). */
    public static List<String> columns(Connection connection, long oid)
            throws SQLException
    {
        List<String> columns = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement(COLUMNS)) {
            statement.setLong(1, oid);
            try (ResultSet rows = statement.executeQuery()) {
                while (rows.next()) {
                    columns.add(rows.getString(1));
                }
            }
        }
        return columns;
    }

    private void add(String key, Status status, String message)
    {
        findings.add(new Finding(status, key, message));
    }
}
