package io.pgsink.connector.standalone.preflight;

import io.debezium.connector.postgresql.PostgresConnectorConfig.AutoCreateMode;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.load.SourceCatalog;
import io.pgsink.connector.standalone.source.CapturedTables;
import io.pgsink.connector.standalone.source.PublicationGaps;
import io.pgsink.connector.standalone.source.SourceDatabase;
import io.pgsink.connector.standalone.source.SourceTables;
import io.pgsink.copy.sql.SqlIdentifiers;
import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.mapping.ColumnSelection;
import io.pgsink.merge.session.TargetCheck;
import io.pgsink.merge.state.LoadProgressStore;
import io.pgsink.merge.state.SourceTableStore;
import org.intellij.lang.annotations.Language;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What {@code pgsink check} verifies before streaming: both databases answer; the source has
 * {@code wal_level=logical}, a user allowed to replicate, a usable replication slot and publication
 * (existing, or creatable), and captured tables with primary keys the user may read; the target has
 * the offsets table (or may create it) and, for every captured table, the routed target table with
 * the source's columns, a primary key and the privileges the flush needs, or, with
 * {@code schema.evolution=add-columns}, a table or columns the sink will create. The replication
 * slot is {@link SlotCheck}'s to check, the target {@link TargetCheck}'s.
 */
public final class Checker
{
    public enum Status
    {
        OK,
        WARN,
        FAIL,
    }

    public record Result(Status status, String subject, String message)
    {
        public Result
        {
            requireNonNull(status, "status is null");
            requireNonNull(subject, "subject is null");
            requireNonNull(message, "message is null");
        }

        @Override
        public String toString()
        {
            String tag = switch (status) {
                case OK -> "[ OK ]";
                case WARN -> "[WARN]";
                case FAIL -> "[FAIL]";
            };
            return tag + " " + subject + ": " + message;
        }
    }

    /** A format: {@link SourceTables#IDENTITY_WITHOUT_KEY} goes in. */
    @Language("SQL")
    private static final String CAPTURED_TABLES = """
            SELECT n.nspname, c.relname, c.oid, c.relreplident,
                   EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND i.indisprimary),
                   has_table_privilege(c.oid, 'SELECT'), %s
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'
            ORDER BY n.nspname, c.relname""";

    private final StandaloneConfig config;
    private final SourceDatabase source;
    private final List<Result> results = new ArrayList<>();

    public Checker(StandaloneConfig config)
    {
        this.config = requireNonNull(config, "config is null");
        this.source = new SourceDatabase(config.debezium());
    }

    public List<Result> run()
    {
        results.clear();
        Map<TableId, List<String>> captured = checkSource();
        checkTarget(captured);
        return List.copyOf(results);
    }

    private Map<TableId, List<String>> checkSource()
    {
        Map<TableId, List<String>> captured = new LinkedHashMap<>();
        String subject = "source " + source.host() + ":" + source.port() + "/" + source.database();
        try (Connection connection = source.connect()) {
            boolean superuser = checkServer(connection, subject);
            checkPublication(connection, subject, superuser);
            captured.putAll(checkCapturedTables(connection, subject));
            checkColumnSelection(connection, subject);
        }
        catch (SQLException e) {
            add(Status.FAIL, subject,
                    "cannot connect or query as " + source.user() + ": " + e.getMessage() + " (SQLState "
                    + e.getSQLState() + ")");
        }
        return captured;
    }

    /** Version, wal_level, the user's right to replicate and the slot; returns whether the user is a superuser. */
    private boolean checkServer(Connection connection, String subject)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("""
                        SELECT current_user, current_setting('server_version'),
                            current_setting('server_version_num')::int, current_setting('wal_level'),
                               r.rolsuper,
                               r.rolsuper OR r.rolreplication OR EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m
                                   JOIN pg_catalog.pg_roles g ON g.oid = m.roleid
                                                                       WHERE m.member = r.oid
                                                                           AND g.rolname = 'rds_replication'),
                               current_setting('max_replication_slots')::int, (SELECT count(*)
                                   FROM pg_catalog.pg_replication_slots)
                        FROM pg_catalog.pg_roles r WHERE r.rolname = current_user""")) {
            rows.next();
            String user = rows.getString(1);
            add(Status.OK, subject, "connected as " + user + " to PostgreSQL " + rows.getString(2));
            if (rows.getInt(3) < 100000) {
                add(Status.FAIL, subject,
                        "PostgreSQL " + rows.getString(2)
                        + " has no pgoutput plugin; logical replication with pgoutput needs PostgreSQL 10 or later");
            }
            String walLevel = rows.getString(4);
            if (walLevel.equals("logical")) {
                add(Status.OK, subject, "wal_level is logical");
            }
            else {
                add(Status.FAIL, subject,
                        "wal_level is " + walLevel
                        + "; logical decoding needs wal_level=logical (ALTER SYSTEM SET wal_level = logical, then "
                        + "restart the server)");
            }
            boolean superuser = rows.getBoolean(5);
            if (rows.getBoolean(6)) {
                add(Status.OK, subject, "user " + user + " may replicate" + (superuser ? " (superuser)" : ""));
            }
            else {
                add(Status.FAIL, subject,
                        "user " + user + " lacks the REPLICATION attribute (ALTER ROLE " + user + " REPLICATION)");
            }
            SlotCheck slot = new SlotCheck(source, subject, results);
            slot.checkSlot(connection, rows.getInt(7), rows.getInt(8));
            slot.checkFailover(connection, rows.getInt(3), rows.getString(2));
            return superuser;
        }
    }

    private void checkPublication(Connection connection, String subject, boolean superuser)
            throws SQLException
    {
        String publication = source.publicationName();
        try (PreparedStatement statement =
                connection.prepareStatement("SELECT puballtables, pubtruncate FROM pg_catalog.pg_publication WHERE "
                + "pubname = ?")) {
            statement.setString(1, publication);
            try (ResultSet rows = statement.executeQuery()) {
                if (rows.next()) {
                    add(Status.OK, subject,
                            "publication " + publication + " exists" + (rows.getBoolean(1) ? " (all tables)" : ""));
                    if (!rows.getBoolean(2)) {
                        add(Status.WARN, subject,
                                "publication " + publication + " does not publish truncates (ALTER PUBLICATION "
                                + publication + " SET (publish = 'insert, update, delete, truncate'))");
                    }
                    List<TableId> missing = source.publicationMode() == AutoCreateMode.FILTERED
                            ? PublicationGaps.missing(connection, config.capturedTables(), publication) : List.of();
                    if (!missing.isEmpty()) {
                        // a problem once the sink streamed (run refuses to start); before, the first start loads them
                        add(Status.WARN, subject, PublicationGaps.message(missing,
                                publication) + " (if pgsink has not streamed yet, the first run loads them and this "
                                + "is no problem)");
                    }
                    return;
                }
            }
        }
        AutoCreateMode mode = source.publicationMode();
        switch (mode) {
            case DISABLED -> add(Status.FAIL, subject,
                    "publication " + publication + " does not exist and source.publication.autocreate.mode=disabled");
            case ALL_TABLES -> add(superuser ? Status.OK : Status.FAIL, subject,
                    "publication " + publication + " will be created FOR ALL TABLES"
                    + (superuser ? "" : ", which needs a superuser: create it yourself or set "
                            + "source.publication.autocreate.mode=filtered"));
            case FILTERED, NO_TABLES -> checkPublicationCreatable(connection, subject, publication, mode, superuser);
        }
    }

    /**
     * CREATE PUBLICATION needs CREATE on the database; FOR TABLE (filtered) also ownership of each
     * table. Without them Debezium fails at run, after the check said nothing.
     */
    private void checkPublicationCreatable(Connection connection, String subject, String publication,
            AutoCreateMode mode, boolean superuser)
            throws SQLException
    {
        String what = "publication " + publication + " will be created for the captured tables ("
                + mode.getValue() + ")";
        if (superuser) {
            add(Status.OK, subject, what);
            return;
        }
        List<String> problems = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT has_database_privilege(current_database(), 'CREATE'), "
                        + "current_database(), current_user")) {
            rows.next();
            if (!rows.getBoolean(1)) {
                problems.add("the user may not create publications: GRANT CREATE ON DATABASE "
                        + SqlIdentifiers.quote(rows.getString(2)) + " TO " + SqlIdentifiers.quote(rows.getString(3)));
            }
        }
        if (mode == AutoCreateMode.FILTERED) {
            List<String> notOwned = new ArrayList<>();
            try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery("""
                    SELECT n.nspname, c.relname, pg_catalog.pg_get_userbyid(c.relowner)
                    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
                      AND NOT pg_catalog.pg_has_role(c.relowner, 'USAGE')
                      AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
                    ORDER BY 1, 2""")) {
                while (rows.next()) {
                    if (config.capturedTables().captures(rows.getString(1), rows.getString(2))) {
                        notOwned.add(TableId.of(rows.getString(1), rows.getString(2))
                                + " (owner " + rows.getString(3) + ")");
                    }
                }
            }
            if (!notOwned.isEmpty()) {
                problems.add("only a table's owner may add it to a publication, and the user does not own " + notOwned
                        + ": create the publication as their owner (CREATE PUBLICATION " + publication
                        + " FOR TABLE ...) and set source.publication.autocreate.mode=disabled, or grant the owner "
                        + "role to the user");
            }
        }
        if (problems.isEmpty()) {
            add(Status.OK, subject, what);
        }
        else {
            add(Status.FAIL, subject, "publication " + publication + " does not exist and cannot be created: "
                    + String.join("; ", problems));
        }
    }

    private Map<TableId, List<String>> checkCapturedTables(Connection connection, String subject)
            throws SQLException
    {
        Map<TableId, List<String>> captured = new LinkedHashMap<>();
        boolean appendOnly = config.sink().appendOnlyWithoutKey();
        try (Statement statement = connection.createStatement(); ResultSet rows =
                statement.executeQuery(CAPTURED_TABLES.formatted(SourceTables.IDENTITY_WITHOUT_KEY))) {
            while (rows.next()) {
                String schema = rows.getString(1);
                String table = rows.getString(2);
                if (!config.capturedTables().captures(schema, table)) {
                    continue;
                }
                TableId id = TableId.of(schema, table);
                captured.put(id, MetadataColumnConflicts.writtenColumns(config, id, TargetCheck.columns(connection,
                        rows.getLong(3))));
                String replicaIdentity = rows.getString(4);
                boolean primaryKey = rows.getBoolean(5);
                if (!rows.getBoolean(6)) {
                    add(Status.FAIL, subject,
                            "table " + id + ": user " + source.user()
                            + " may not SELECT from it (the snapshot reads it)");
                }
                if (!primaryKey) {
                    add(appendOnly ? Status.WARN : Status.FAIL, subject,
                            "table " + id + " has no primary key" + (appendOnly
                            ? ": applied append-only (tables.without.key=append-only), so its updates and deletes "
                                    + "will fail"
                            : ": add one, or set tables.without.key=append-only for insert-only tables"));
                }
                else if (replicaIdentity.equals("n")) {
                    add(Status.FAIL, subject,
                            "table " + id + " has REPLICA IDENTITY NOTHING: its updates and deletes carry no key "
                            + "(ALTER TABLE " + id + " REPLICA IDENTITY DEFAULT)");
                }
                else if (rows.getBoolean(7)) {
                    add(Status.FAIL, subject,
                            "table " + id + " has REPLICA IDENTITY USING INDEX of an index without (all) its primary "
                            + "key columns: its deletes and key changes"
                            + " are streamed without the old key (ALTER TABLE " + id + " REPLICA IDENTITY DEFAULT)");
                }
                else {
                    add(Status.OK, subject,
                            "table " + id + " has a primary key" + (replicaIdentity.equals("f")
                            ? " and REPLICA IDENTITY FULL" : ""));
                }
            }
        }
        if (captured.isEmpty()) {
            // the same verdict as run's (SourcePreflight)
            add(source.publicationMode() == AutoCreateMode.FILTERED ? Status.FAIL : Status.WARN, subject,
                    CapturedTables.nothingCaptured(source.publicationMode()));
        }
        return captured;
    }

    private void checkColumnSelection(Connection connection, String subject)
            throws SQLException
    {
        ColumnSelection selection = config.sink().columnSelection();
        if (selection.isEmpty()) {
            return;
        }
        List<ConfigProblem> problems = selection.problems(SourceCatalog.schemas(connection,
                config.loadSettings().captured()));
        for (ConfigProblem problem : problems) {
            add(Status.FAIL, subject, problem.message());
        }
        if (problems.isEmpty()) {
            add(Status.OK, subject, "column selection fits the captured tables (" + selection + ")");
        }
    }

    private void checkTarget(Map<TableId, List<String>> captured)
    {
        SinkConfig sink = config.sink();
        String subject = "target " + sink.targetUrl();
        List<TargetCheck.Table> tables = new ArrayList<>();
        captured.forEach((source, columns) -> tables.add(new TargetCheck.Table(sink.tableNameFormat().targetOf(source),
                Optional.of(source), columns)));
        // the service's own tables beside the offsets table: the source tables' readings, the initial load's progress
        List<String> stateTables = config.copyLoad()
                ? List.of(SourceTableStore.TABLE, LoadProgressStore.TABLE)
                : List.of(SourceTableStore.TABLE);
        TargetCheck check = new TargetCheck(sink, ", so the service starts with its initial load "
                + "(source.snapshot.mode)", config.copyLoad(), stateTables);
        for (TargetCheck.Finding finding : check.run(tables)) {
            Status status = switch (finding.status()) {
                case OK -> Status.OK;
                case WARN -> Status.WARN;
                case FAIL -> Status.FAIL;
            };
            add(status, subject, finding.message());
        }
    }

    private void add(Status status, String subject, String message)
    {
        results.add(new Result(status, subject, message));
    }
}
