package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.connector.standalone.service.RunningService;
import io.pgsink.connector.standalone.service.TestingDatabase;
import io.pgsink.connector.standalone.service.TypeColumns;
import io.pgsink.copy.testing.GreenplumGiven;
import io.pgsink.copy.testing.TestingGreenplum;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AbstractVerifyCommandTest} with a Greenplum target (the coordinator at
 * {@code PGSINK_TEST_GREENPLUM_URL}): the target tables are distributed by their keys over the
 * cluster's segments, so each chunk is counted and hashed on every segment at once. Besides the
 * shared tests: every type of the type tests ({@link TypeColumns}), and rows written straight into a
 * segment that does not own their key (in utility mode, as a faulty expansion or a hand repair
 * could leave them), which neither the coordinator's key lookups nor a join on the key find.
 */
@GreenplumGiven
class GreenplumVerifyCommandIT
        extends AbstractVerifyCommandTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final String TYPES = "public.types";

    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingGreenplum.server();
    }

    /**
     * Every type of the type tests, copied by the initial load, compares equal; a changed value of
     * several types (a TOASTed text and bytea among them, and a NULL made a value), a deleted and an
     * extra row are named, and repaired through the apply path to the source's text.
     */
    @Test
    void everyTypeOfTheTypeTests()
            throws Exception
    {
        TestingDatabase source = source();
        TestingDatabase target = target();
        // a non-ASCII "char" prints as \ooo on the source (PostgreSQL 15 does too), which Greenplum 7
        // (PostgreSQL 12 based) reads as a backslash: left NULL, as between PostgreSQL 16 and 15
        TypeColumns types = new TypeColumns(TypeColumns.of(TestingPostgreSqlServer.source().majorVersion(),
                TestingGreenplum.server().majorVersion()).numericInfinity(), false);
        pipeline.executeInBoth(TypeColumns.TYPES.toArray(String[]::new));
        source.execute(TypeColumns.createTable(TYPES), types.insertRows(TYPES, 1), types.insertRows(TYPES, 101));
        target.execute(TypeColumns.createTable(TYPES) + " DISTRIBUTED BY (id)");
        Map<String, String> properties = pipeline.properties(TYPES);
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the initial load", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(running.service().state()).isEqualTo(ServiceState.State.STREAMING);
            });
        }
        String text = typesText();
        assertThat(target.query(text)).isEqualTo(source.query(text));
        TestingCommand equal = verify(properties);
        assertThat(equal.exitCode()).as(equal.out() + equal.err()).isZero();
        assertThat(equal.out()).contains("[ EQUAL ] \"public\".\"types\": 16 source rows, 16 target rows, 1 chunk");

        target.execute(
                "UPDATE public.types SET c_jsonb = '{\"changed\": true}' WHERE id = 1",
                "UPDATE public.types SET c_timetz = '10:15:30+05' WHERE id = 2",
                "DELETE FROM public.types WHERE id = 3",
                "UPDATE public.types SET c_decimal = c_decimal + 1 WHERE id = 4",
                // one byte of a TOASTed bytea, one character of a TOASTed text
                "UPDATE public.types SET c_bytea = overlay(c_bytea placing '\\x00' from 9000 for 1) WHERE id = 5",
                "UPDATE public.types SET c_text = overlay(c_text placing 'X' from 5000 for 1) WHERE id = 7",
                // a NULL of the all-NULL row made a value
                "UPDATE public.types SET c_bool = true WHERE id = 8",
                "UPDATE public.types SET c_int_matrix = '{{1,2},{3,5}}' WHERE id = 101",
                "INSERT INTO public.types (id, c_text) VALUES (999, 'extra')");

        TestingCommand differs = verify(properties);

        assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(1);
        assertThat(differs.out())
                .contains("[DIFFERS] \"public\".\"types\": 9 keys differ (missing 1, extra 1, different 7);"
                        + " 16 source rows, 16 target rows, 1 chunk")
                .contains("    missing: (id)=(3)\n")
                .contains("    extra: (id)=(999)\n")
                .doesNotContain("changed");
        TestingCommand repair = pgsink("repair", properties);
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out()).contains("[REPAIRED] \"public\".\"types\": 8 rows written from the source,"
                + " 1 row removed");
        assertThat(target.query(text)).isEqualTo(source.query(text));
        TestingCommand clean = verify(properties);
        assertThat(clean.exitCode()).as(clean.out() + clean.err()).isZero();
    }

    /** Every column of the types table as text, by id. */
    private static String typesText()
    {
        List<String> columns = new ArrayList<>(List.of("id"));
        TypeColumns.COLUMNS.forEach(column -> columns.add(column.name() + "::text"));
        return "SELECT " + String.join(", ", columns) + " FROM " + TYPES + " ORDER BY id";
    }

    /**
     * Rows on a segment that does not own their key, written there in utility mode: a second row of
     * a key (a duplicate that the per-segment primary key index cannot see), an extra key, and a row
     * moved to another segment with its values unchanged. Verify names exactly these keys, in each of
     * two runs (its range scans read every segment, its re-check reads every segment too, and the
     * moved row is found by where its key is placed), and repair leaves one row of each key the source
     * has, on the segment that owns it, and none of the extra key.
     */
    @Test
    void rowsOnTheWrongSegment()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        TestingDatabase target = target();
        int duplicateOwner = segmentOf(1010);
        int extraOwner = segmentOf(99998);
        int movedOwner = segmentOf(1020);
        inUtilityMode(otherSegment(duplicateOwner), "INSERT INTO public.orders VALUES (1010, 'stray', 1, NULL)");
        inUtilityMode(otherSegment(extraOwner), "INSERT INTO public.orders VALUES (99998, 'stray', 1, NULL)");
        List<String> moved = source().query("SELECT id, status, amount FROM public.orders WHERE id = 1020").get(0);
        target.execute("DELETE FROM public.orders WHERE id = 1020");
        inUtilityMode(otherSegment(movedOwner), "INSERT INTO public.orders VALUES (" + moved.get(0) + ", '"
                + moved.get(1) + "', " + moved.get(2) + ", NULL)");
        String placed = "SELECT id, gp_segment_id FROM public.orders WHERE id IN (1010, 1020, 99998) ORDER BY 1, 2";
        assertThat(target.query(placed)).hasSize(4);

        for (int run = 0; run < 2; run++) {
            TestingCommand differs = verify(properties);

            assertThat(differs.exitCode()).as(differs.out() + differs.err()).isEqualTo(1);
            assertThat(differs.out())
                    .contains("[DIFFERS] \"public\".\"orders\": 3 keys differ (missing 0, extra 1, different 1,"
                            + " misplaced 1); 2500 source rows, 2502 target rows, 3 chunks\n"
                            + "    extra: (id)=(99998)\n"
                            + "    different: (id)=(1010)\n"
                            + "    misplaced: (id)=(1020)\n")
                    .contains("[ EQUAL ] \"public\".\"items\"")
                    .contains("2 still differ")
                    .doesNotContain("stray");
        }

        TestingCommand repair = pgsink("repair", properties);

        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out()).contains("[REPAIRED] \"public\".\"orders\": 2 rows written from the source,"
                + " 1 row removed, 3 rows on a segment that does not own its key removed");
        assertThat(target.query(placed)).containsExactly(List.of("1010", String.valueOf(duplicateOwner)),
                List.of("1020", String.valueOf(movedOwner)));
        String orders = "SELECT * FROM public.orders ORDER BY id";
        assertThat(target.query(orders)).isEqualTo(source().query(orders));
        TestingCommand clean = verify(properties);
        assertThat(clean.exitCode()).as(clean.out() + clean.err()).isZero();
    }

    /**
     * Without {@code --chunk-rows}, a Greenplum target's ranges hold 100,000 source rows (each range's
     * hash is dispatched to every segment, at a fixed cost); a range that differs is cut into ranges of
     * 10,000 rows before its keys are read (4 here), and the differing keys are named as with small
     * ranges.
     */
    @Test
    void defaultRangesAreLargeAndCutWhereTheyDiffer()
            throws Exception
    {
        source().execute("INSERT INTO public.orders SELECT g, 'bulk', g, NULL FROM generate_series(10001, 40000) g");
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        target().execute(
                "UPDATE public.orders SET status = 'changed' WHERE id = 25000",
                "DELETE FROM public.orders WHERE id = 39999",
                "INSERT INTO public.orders VALUES (5000, 'extra', 1, NULL)");
        String config = TestingCommand.configFile(directory.resolve("default.properties"), properties).toString();

        TestingCommand result = TestingCommand.run("verify", "--config", config);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out())
                .contains("[DIFFERS] \"public\".\"orders\": 3 keys differ (missing 1, extra 1, different 1);"
                        + " 32500 source rows, 32500 target rows, 4 chunks")
                .contains("    missing: (id)=(39999)\n")
                .contains("    extra: (id)=(5000)\n")
                .contains("    different: (id)=(25000)\n")
                .contains("[ EQUAL ] \"public\".\"items\": 298 source rows, 298 target rows, 1 chunk");
    }

    /** The segment (its content id) that owns order {@code id}'s key: where the coordinator puts a new row of it. */
    private int segmentOf(long id)
            throws Exception
    {
        target().execute("CREATE TABLE IF NOT EXISTS public.owner (id bigint) DISTRIBUTED BY (id)",
                "INSERT INTO public.owner VALUES (" + id + ")");
        return Integer.parseInt(target().query("SELECT gp_segment_id FROM public.owner WHERE id = " + id).get(0)
                .get(0));
    }

    /** A primary segment other than {@code content}, as its content id, host and port. */
    private List<String> otherSegment(int content)
            throws Exception
    {
        return target().query("SELECT content, hostname, port FROM gp_segment_configuration WHERE role = 'p'"
                + " AND content >= 0 AND content <> " + content + " ORDER BY content LIMIT 1").get(0);
    }

    /** Runs {@code sql} on {@code segment}'s own database in utility mode, past the coordinator. */
    private void inUtilityMode(List<String> segment, String... sql)
            throws Exception
    {
        TestingDatabase target = target();
        Properties properties = new Properties();
        properties.setProperty("user", target.user());
        if (target.password() != null) {
            properties.setProperty("password", target.password());
        }
        properties.setProperty("options", "-c gp_role=utility");
        String url = "jdbc:postgresql://" + segment.get(1) + ":" + segment.get(2) + "/"
                + URLEncoder.encode(target.name(), StandardCharsets.UTF_8);
        try (Connection connection = DriverManager.getConnection(url, properties);
                Statement statement = connection.createStatement()) {
            for (String each : sql) {
                statement.execute(each);
            }
        }
    }
}
