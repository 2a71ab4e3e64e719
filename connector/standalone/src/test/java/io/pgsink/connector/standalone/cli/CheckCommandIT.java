package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.service.TestingPipeline;

import io.pgsink.connector.standalone.service.TestingDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code pgsink check} against real databases, through the command line. */
class CheckCommandIT
{
    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("check");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    private Path configFile(Path directory, Map<String, String> extra)
            throws IOException
    {
        Map<String, String> properties = pipeline.properties();
        properties.putAll(extra);
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        return file;
    }

    private static TestingCommand pgsink(String... args)
    {
        return TestingCommand.run(args);
    }

    @Test
    void readyWhenBothSidesAreSetUp(@TempDir Path directory)
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)", "CREATE TABLE public.ignored (x int)");
        target.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text, extra int)");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.orders")).toString());
        assertThat(outcome.out())
                .contains("[ OK ] source 127.0.0.1:" + source.port() + "/" + source.name() + ": connected as")
                .contains("wal_level is logical")
                .contains("may replicate")
                .contains("replication slot " + sinkName + " will be created")
                .contains("publication " + sinkName + " will be created for the captured tables (filtered)")
                .contains("table \"public\".\"orders\" has a primary key")
                .contains("offsets table \"public\".\"pgsink_offsets\" will be created")
                .contains("[ OK ] target " + target.jdbcUrl() + ": table \"public\".\"orders\" is ready")
                .contains("pgsink check: ready to stream")
                .doesNotContain("[FAIL]")
                .doesNotContain("ignored");
        assertThat(outcome.exitCode()).as(outcome.out()).isZero();
    }

    @Test
    void namesEveryProblem(@TempDir Path directory)
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.orders (id bigint PRIMARY KEY, note text, added int)",
                "CREATE TABLE public.no_key (x int)",
                "CREATE TABLE public.missing (id int PRIMARY KEY)",
                "CREATE TABLE public.by_index (id int PRIMARY KEY, u int NOT NULL UNIQUE)",
                "ALTER TABLE public.by_index REPLICA IDENTITY USING INDEX by_index_u_key",
                // a slot of that name made for another plugin
                "SELECT pg_create_logical_replication_slot('" + sinkName + "', 'test_decoding')");
        target.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)", "CREATE TABLE public.by_index (id int PRIMARY KEY, u int)");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, Map.of()).toString());
        assertThat(outcome.out())
                .contains("[FAIL] source 127.0.0.1:" + source.port() + "/" + source.name() + ": replication slot " + sinkName + " exists but uses plugin test_decoding, not pgoutput")
                .contains("[FAIL] source 127.0.0.1:" + source.port() + "/" + source.name() + ": table \"public\".\"no_key\" has no primary key: add one, or set tables.without.key=append-only")
                .contains("[FAIL] target " + target.jdbcUrl() + ": table \"public\".\"missing\" does not exist: create it with the source table's columns and primary key")
                .contains("[FAIL] target " + target.jdbcUrl() + ": table \"public\".\"orders\" lacks source column(s) [added] (add them, or set schema.evolution=add-columns)")
                .contains("[FAIL] target " + target.jdbcUrl() + ": table \"public\".\"no_key\" does not exist")
                .contains("[FAIL] source 127.0.0.1:" + source.port() + "/" + source.name() + ": table \"public\".\"by_index\" has REPLICA IDENTITY USING INDEX of an index"
                        + " without (all) its primary key columns: its deletes and key changes are streamed without the old key (ALTER TABLE \"public\".\"by_index\" REPLICA IDENTITY DEFAULT)")
                .contains("pgsink check: 6 problems to fix before streaming");
        assertThat(outcome.exitCode()).isEqualTo(1);
    }

    @Test
    void namesTheMissingPrivilegesOfTheTargetRole(@TempDir Path directory)
            throws Exception
    {
        String role = TestingDatabase.randomName("pgsink_check_role");
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)");
        target.execute(
                "CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)",
                "CREATE ROLE " + role + " LOGIN",
                // everything the sink needs but DELETE on the table and TEMPORARY on the database
                "GRANT SELECT, INSERT, TRUNCATE ON public.orders TO " + role,
                "GRANT CREATE ON SCHEMA public TO " + role,
                "REVOKE TEMPORARY ON DATABASE " + target.name() + " FROM PUBLIC");
        try {
            TestingCommand outcome = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.orders", "target.user", role)).toString());
            assertThat(outcome.out())
                    .contains("[FAIL] target " + target.jdbcUrl() + ": table \"public\".\"orders\" lacks the privilege(s) DELETE (the sink needs")
                    .contains("[FAIL] target " + target.jdbcUrl() + ": the user lacks the TEMPORARY privilege on database " + target.name())
                    .contains("offsets table \"public\".\"pgsink_offsets\" will be created")
                    .contains("pgsink check: 2 problems to fix before streaming");
            assertThat(outcome.exitCode()).isEqualTo(1);

            target.execute("GRANT DELETE ON public.orders TO " + role, "GRANT TEMPORARY ON DATABASE " + target.name() + " TO " + role);
            TestingCommand fixed = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.orders", "target.user", role)).toString());
            assertThat(fixed.out()).contains("table \"public\".\"orders\" is ready").doesNotContain("[FAIL]")
                    // without UPDATE, flushes on PostgreSQL 15+ fall back from MERGE to delete and insert
                    .contains("[WARN] target " + target.jdbcUrl() + ": table \"public\".\"orders\" is ready, but the user may not UPDATE it");
            assertThat(fixed.exitCode()).as(fixed.out()).isZero();

            target.execute("GRANT UPDATE ON public.orders TO " + role);
            TestingCommand complete = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.orders", "target.user", role)).toString());
            assertThat(complete.out()).contains("[ OK ] target " + target.jdbcUrl() + ": table \"public\".\"orders\" is ready").doesNotContain("[WARN]");

            // nothing is stored for the sink yet, so its initial load runs first and empties the table
            target.execute("REVOKE TRUNCATE ON public.orders FROM " + role);
            TestingCommand noTruncate = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.orders", "target.user", role)).toString());
            assertThat(noTruncate.out()).contains("[FAIL] target " + target.jdbcUrl() + ": table \"public\".\"orders\" lacks the privilege(s) TRUNCATE (the sink needs"
                    + " SELECT, INSERT and DELETE on the table and USAGE on its schema; the initial load, which runs first, empties the table with TRUNCATE)");
            assertThat(noTruncate.exitCode()).isEqualTo(1);
        }
        finally {
            target.execute("DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }

    @Test
    void missingTargetTablesAreFineWhenTheSinkCreatesThem(@TempDir Path directory)
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text, added int)", "CREATE TABLE public.items (id int PRIMARY KEY)");
        target.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, Map.of("schema.evolution", "add-columns")).toString());
        assertThat(outcome.out())
                .contains("[ OK ] target " + target.jdbcUrl() + ": table \"public\".\"items\" does not exist yet and will be created from the source table (schema.evolution=add-columns)")
                .contains("[ OK ] target " + target.jdbcUrl() + ": table \"public\".\"orders\" lacks source column(s) [added], which will be added")
                .doesNotContain("[FAIL]");
        assertThat(outcome.exitCode()).isZero();
    }

    @Test
    void unreachableDatabasesAreProblemsNotCrashes(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> extra = new HashMap<>();
        extra.put("source.database.dbname", "no_such_database_" + sinkName);
        extra.put("target.url", "jdbc:postgresql://127.0.0.1:" + target.port() + "/no_such_database_" + sinkName);
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, extra).toString());
        assertThat(outcome.out())
                .contains("[FAIL] source 127.0.0.1:" + source.port() + "/no_such_database_" + sinkName + ": cannot connect or query as")
                .contains("[FAIL] target jdbc:postgresql://127.0.0.1:" + target.port() + "/no_such_database_" + sinkName + ": cannot connect or query")
                .contains("(SQLState 3D000)");
        assertThat(outcome.exitCode()).isEqualTo(1);
    }

    @Test
    void invalidIncludeListIsAConfigurationProblemNotAStackTrace(@TempDir Path directory)
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY)");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, Map.of("source.table.include.list", "public.(orders")).toString());
        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err()).isEqualTo("pgsink: Invalid pgsink configuration (1 problem):\n"
                + "  Invalid value 'public.(orders' for configuration source.table.include.list: 'public.(orders' is not a regular expression: Unclosed group near index 14\n");
        assertThat(outcome.out()).isEmpty();
    }

    /** An include list that matches no table: the same verdict from check and run, a line each, no stack trace. */
    @Test
    void noCapturedTableIsTheSameVerdictForCheckAndRun(@TempDir Path directory)
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY)");
        Path file = configFile(directory, Map.of("source.table.include.list", "public.no_such_table", "http.port", "-1"));
        String verdict = "no table matches source.table.include.list, source.table.exclude.list, source.schema.include.list and source.schema.exclude.list: nothing would be captured,"
                + " and publication.autocreate.mode=filtered cannot create a publication of no table: fix the lists";

        TestingCommand check = pgsink("check", "--config", file.toString());
        assertThat(check.out()).contains("[FAIL] source 127.0.0.1:" + source.port() + "/" + source.name() + ": " + verdict);
        assertThat(check.exitCode()).isEqualTo(1);

        TestingCommand run = pgsink("run", "--config", file.toString());
        assertThat(run.err()).isEqualTo("pgsink: Cannot stream from " + source.host() + ":" + source.port() + "/" + source.name() + ": " + verdict + "\n");
        assertThat(run.exitCode()).isEqualTo(1);
    }

    /** The include list is compiled when the configuration is validated: run refuses an invalid one as check does. */
    @Test
    void invalidIncludeListIsRefusedByRunAsByCheck(@TempDir Path directory)
            throws Exception
    {
        TestingCommand run = pgsink("run", "--config", configFile(directory, Map.of("source.table.include.list", "public.(orders")).toString());
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).isEqualTo("pgsink: Invalid pgsink configuration (1 problem):\n"
                + "  Invalid value 'public.(orders' for configuration source.table.include.list: 'public.(orders' is not a regular expression: Unclosed group near index 14\n");
    }

    @Test
    void invalidConfigurationIsReportedAllAtOnceWithExitCode2(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> extra = new HashMap<>();
        extra.put("flush.max.events", "-5");
        extra.put("source.database.port", "not-a-port");
        extra.put("sink.nmae", "typo");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, extra).toString());
        assertThat(outcome.exitCode()).isEqualTo(2);
        assertThat(outcome.err())
                .startsWith("pgsink: Invalid pgsink configuration (3 problems):")
                .contains("Invalid value '-5' for configuration flush.max.events: must be at least 1")
                .contains("Unknown configuration sink.nmae")
                .contains("for configuration source.database.port");

        TestingCommand missingFile = pgsink("run", "--config", directory.resolve("nope.properties").toString());
        assertThat(missingFile.exitCode()).isEqualTo(2);
        assertThat(missingFile.err()).contains("Cannot read configuration file");

        TestingCommand noCommand = pgsink();
        assertThat(noCommand.exitCode()).isEqualTo(2);
        assertThat(noCommand.err()).contains("Missing command");
    }

    /**
     * A metadata column a captured source table has already would take two values in one target
     * column: check and run refuse it as a configuration problem (exit code 2), every colliding
     * key at once, before run creates anything.
     */
    @Test
    void metadataColumnsThatSourceTablesHaveAreConfigurationProblems(@TempDir Path directory)
            throws Exception
    {
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)", "CREATE TABLE public.items "
                + "(id int PRIMARY KEY)");
        Map<String, String> extra = new HashMap<>();
        extra.put("metadata.operation.column", "id");
        extra.put("metadata.source.position.column", "note");
        extra.put("metadata.applied.timestamp.column", "applied_at");
        extra.put("http.port", "-1");
        Path file = configFile(directory, extra);
        String expected = "pgsink: Invalid pgsink configuration (2 problems):\n"
                + "  Invalid value 'id' for configuration metadata.operation.column: captured source tables "
                + "[\"public\".\"items\", \"public\".\"orders\"] already have a column id"
                + " that the sink writes; name a column no captured table has (or rename the source column with "
                + "column.rename)\n"
                + "  Invalid value 'note' for configuration metadata.source.position.column: captured source table "
                + "[\"public\".\"orders\"] already has a column note"
                + " that the sink writes; name a column no captured table has (or rename the source column with "
                + "column.rename)\n";
        for (String command : List.of("check", "run")) {
            TestingCommand outcome = pgsink(command, "--config", file.toString());
            assertThat(outcome.err()).as(command).isEqualTo(expected);
            assertThat(outcome.exitCode()).as(command).isEqualTo(2);
            assertThat(outcome.out()).as(command).isEmpty();
        }
        assertThat(source.replicationSlots()).as("run created no slot").isEmpty();
        assertThat(target.query("SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = "
                + "'pgsink_offsets'")).as("run created no offsets table").containsExactly(List.of("0"));

        // renamed, the source column no longer takes the metadata column's name
        extra.remove("metadata.source.position.column");
        extra.put("column.rename", "public.orders.id:order_id,public.items.id:item_id");
        TestingCommand renamed = pgsink("check", "--config", configFile(directory, extra).toString());
        assertThat(renamed.err()).isEmpty();
        assertThat(renamed.out()).doesNotContain("metadata.operation.column");
    }

    /**
     * Empty names (offsets.table=, sink.name=) are configuration problems of check, not stack traces or late failures.
     */
    @Test
    void emptyNamesAreConfigurationProblems(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> extra = new HashMap<>();
        extra.put("offsets.table", "");
        extra.put("sink.name", "");
        extra.put("source.slot.name", "");
        TestingCommand outcome = pgsink("check", "--config", configFile(directory, extra).toString());
        assertThat(outcome.err()).isEqualTo("pgsink: Invalid pgsink configuration (3 problems):\n"
                + "  Invalid value '' for configuration sink.name: must not be empty\n"
                + "  Invalid value '' for configuration offsets.table: must not be empty\n"
                + "  Invalid value '' for configuration source.slot.name: must not be empty: it names the replication "
                + "slot; remove the key for pgsink's default (from sink.name)\n");
        assertThat(outcome.exitCode()).isEqualTo(2);
    }

    /**
     * A source user that may replicate but not create the filtered publication: check names what
     * is missing (CREATE on the database, ownership of the captured tables) and how to fix it.
     */
    @Test
    void namesWhatTheSourceUserLacksToCreateThePublication(@TempDir Path directory)
            throws Exception
    {
        String role = TestingDatabase.randomName("pgsink_check_replicator");
        source.execute("CREATE TABLE public.orders (id bigint PRIMARY KEY, note text)", "CREATE ROLE " + role
                + " LOGIN REPLICATION", "GRANT SELECT ON public.orders TO " + role);
        try {
            Map<String, String> extra = new HashMap<>();
            extra.put("source.table.include.list", "public.orders");
            extra.put("source.database.user", role);
            TestingCommand outcome = pgsink("check", "--config", configFile(directory, extra).toString());
            assertThat(outcome.out()).contains("[FAIL] source 127.0.0.1:" + source.port() + "/" + source.name()
                    + ": publication " + sinkName
                    + " does not exist and cannot be created: the user may not create publications: GRANT CREATE ON "
                    + "DATABASE \"" + source.name() + "\" TO \"" + role + "\";"
                    + " only a table's owner may add it to a publication, and the user does not own "
                    + "[\"public\".\"orders\" (owner " + source.user() + ")]");
            assertThat(outcome.exitCode()).isEqualTo(1);

            source.execute("GRANT CREATE ON DATABASE " + source.name() + " TO "
                    + role, "ALTER TABLE public.orders OWNER TO " + role);
            TestingCommand fixed = pgsink("check", "--config", configFile(directory, extra).toString());
            assertThat(fixed.out()).contains("[ OK ] source 127.0.0.1:" + source.port() + "/" + source.name()
                    + ": publication " + sinkName + " will be created");
        }
        finally {
            source.execute("DROP OWNED BY " + role, "DROP ROLE " + role);
        }
    }
}
