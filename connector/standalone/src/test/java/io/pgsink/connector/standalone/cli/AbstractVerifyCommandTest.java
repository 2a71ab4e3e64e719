package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.service.ServiceProcess;

import io.pgsink.connector.standalone.service.TestingPipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.connector.standalone.service.RunningService;
import io.pgsink.connector.standalone.service.TestingDatabase;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code pgsink verify} through the command line, against a source and a target the standalone
 * service streamed: divergences made by hand on the target are named key by key, and nothing else;
 * on a PostgreSQL ({@link VerifyCommandIT}) or Greenplum ({@link GreenplumVerifyCommandIT}) target.
 */
abstract class AbstractVerifyCommandTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final String ORDERS = "SELECT * FROM public.orders ORDER BY id";
    private static final String ITEMS = "SELECT * FROM public.items ORDER BY 1, 2";

    @TempDir
    Path directory;
    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("verify", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    protected final TestingDatabase source()
    {
        return source;
    }

    protected final TestingDatabase target()
    {
        return target;
    }

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute(
                "CREATE TABLE public.orders (id bigint PRIMARY KEY, status text NOT NULL, amount "
                        + "numeric(12,2), note text)",
                "CREATE TABLE public.items (\"Order\" bigint, line int, sku text, PRIMARY KEY (\"Order\", line))",
                "INSERT INTO public.orders SELECT g, 'new', g * 1.5, NULL FROM generate_series(1, 2500) g",
                "UPDATE public.orders SET note = (SELECT string_agg(md5(g::text), '') FROM "
                        + "generate_series(1, 300) g) WHERE id IN (30, 2030)",
                "INSERT INTO public.items SELECT g / 3, g % 3, 'sku-' || g FROM generate_series(3, 300) g");
    }

    protected final Map<String, String> configuration()
    {
        Map<String, String> properties = pipeline.properties("public.orders,public.items");
        properties.put("schema.evolution", "add-columns");
        return properties;
    }

    protected final void awaitEqual(RunningService running, String query)
    {
        pipeline.awaitEqual(running, query, CATCH_UP);
    }

    /** Waits until the service streams the live workload's changes. */
    protected final void awaitStreaming(RunningService running)
    {
        RunningService.await("the service to stream the live workload", CATCH_UP, () -> {
            running.assertRunning();
            assertThat(source.query("SELECT active FROM pg_replication_slots WHERE slot_name = '" + sinkName
                    + "'")).containsExactly(List.of("t"));
            assertThat(target.query("SELECT count(*) FROM public.pgsink_offsets WHERE sink_name = '" + sinkName
                    + "'")).containsExactly(List.of("1"));
        });
    }

    /** Streams the source into the target, until both tables are equal, then stops the service. */
    protected final void streamAndStop(Map<String, String> properties)
    {
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, ORDERS);
            awaitEqual(running, ITEMS);
        }
    }

    protected final TestingCommand verify(Map<String, String> properties, String... extra)
            throws Exception
    {
        return pgsink("verify", properties, extra);
    }

    protected final TestingCommand pgsink(String command, Map<String, String> properties, String... extra)
            throws Exception
    {
        List<String> args = new ArrayList<>(List.of(command, "--config",
                TestingCommand.configFile(directory.resolve("pgsink.properties"), properties).toString(),
                "--chunk-rows", "1000"));
        args.addAll(List.of(extra));
        return TestingCommand.run(args.toArray(String[]::new));
    }

    @Test
    void equalTablesExitZero()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);

        TestingCommand result = verify(properties);

        assertThat(result.exitCode()).as(result.out() + result.err()).isZero();
        assertThat(result.out())
                .contains("[ EQUAL ] \"public\".\"orders\": 2500 source rows, 2500 target rows, 3 chunks")
                .contains("[ EQUAL ] \"public\".\"items\": 298 source rows, 298 target rows, 1 chunk")
                .contains("pgsink verify: 2 tables, 2 equal, 0 differing (0 keys)");
    }

    @Test
    void namesExactlyTheDivergentKeys()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        target.execute(
                "UPDATE public.orders SET status = 'changed' WHERE id = 10",
                "DELETE FROM public.orders WHERE id = 1500",
                "INSERT INTO public.orders VALUES (99999, 'extra', 1, NULL)",
                // one character of a TOASTed value
                "UPDATE public.orders SET note = overlay(note placing 'X' from 5000 for 1) WHERE id = 30",
                "DELETE FROM public.items WHERE \"Order\" = 5 AND line = 1",
                "UPDATE public.items SET sku = 'changed' WHERE \"Order\" = 7 AND line = 2");
        Path json = directory.resolve("report.json");

        for (int run = 0; run < 3; run++) {
            TestingCommand result = verify(properties, "--json", json.toString());

            assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
            assertThat(result.out())
                    .contains("[DIFFERS] \"public\".\"orders\": 4 keys differ (missing 1, extra 1, different "
                            + "2); 2500 source rows, 2500 target rows, 3 chunks")
                    .contains("    missing: (id)=(1500)")
                    .contains("    extra: (id)=(99999)")
                    .containsPattern("    different: \\(id\\)=\\((10|30)\\), \\(id\\)=\\((10|30)\\)")
                    .contains("[DIFFERS] \"public\".\"items\": 2 keys differ (missing 1, extra 0, different 1)")
                    .contains("    missing: (Order, line)=(5, 1)")
                    .contains("    different: (Order, line)=(7, 2)")
                    .contains("pgsink verify: 2 tables, 0 equal, 2 differing (6 keys)")
                    .doesNotContain("changed");
            JsonNode report = new ObjectMapper().readTree(json.toFile());
            assertThat(report.get("equal").asBoolean()).isFalse();
            assertThat(report.get("differences").asLong()).isEqualTo(6);
            JsonNode first = report.get("tables").get(0);
            JsonNode orders = first.get("source").asText().equals("\"public\".\"orders\"")
                    ? first : report.get("tables").get(1);
            assertThat(orders.get("missing").toString()).isEqualTo("[[\"1500\"]]");
            assertThat(orders.get("extra").toString()).isEqualTo("[[\"99999\"]]");
            assertThat(orders.get("differentCount").asLong()).isEqualTo(2);
            assertThat(orders.get("keyColumns").toString()).isEqualTo("[\"id\"]");
        }
    }

    @Test
    void cleanUnderLiveWorkload()
            throws Exception
    {
        Map<String, String> properties = configuration();
        try (RunningService running = RunningService.start(properties);
                LiveWorkload workload = new LiveWorkload(source)) {
            awaitStreaming(running);
            for (int run = 0; run < 3; run++) {
                long before = workload.awaitMore(20);

                TestingCommand result = verify(properties, "--catch-up-timeout-ms", "60000");

                assertThat(result.exitCode()).as(result.out() + result.err()).isZero();
                assertThat(result.out()).contains("pgsink verify: 2 tables, 2 equal, 0 differing (0 keys)");
                assertThat(workload.awaitMore(20)).as("the workload ran on").isGreaterThan(before);
                running.assertRunning();
            }
        }
    }

    @Test
    void namesTheDivergentKeysUnderLiveWorkload()
            throws Exception
    {
        Map<String, String> properties = configuration();
        try (RunningService running = RunningService.start(properties);
                LiveWorkload workload = new LiveWorkload(source)) {
            awaitStreaming(running);
            // keys the workload leaves alone
            target.execute(
                    "UPDATE public.orders SET status = 'changed' WHERE id = 1010",
                    "DELETE FROM public.orders WHERE id = 1500",
                    "INSERT INTO public.orders VALUES (99999, 'extra', 1, NULL)",
                    "UPDATE public.orders SET note = overlay(note placing 'X' from 5000 for 1) WHERE id = 2030",
                    "DELETE FROM public.items WHERE \"Order\" = 80 AND line = 1");
            for (int run = 0; run < 3; run++) {
                workload.awaitMore(20);

                TestingCommand result = verify(properties, "--catch-up-timeout-ms", "60000");

                assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
                assertThat(result.out())
                        .contains("4 keys differ (missing 1, extra 1, different 2)")
                        .contains("    missing: (id)=(1500)")
                        .contains("    extra: (id)=(99999)")
                        .containsPattern("    different: \\(id\\)=\\((1010|2030)\\), \\(id\\)=\\((1010|2030)\\)\n")
                        .contains("1 key differs (missing 1, extra 0, different 0)")
                        .contains("    missing: (Order, line)=(80, 1)\n")
                        .contains("pgsink verify: 2 tables, 0 equal, 2 differing (5 keys)")
                        .contains("after the sink applied the source up to");
                running.assertRunning();
            }
        }
    }

    @Test
    void repairWritesExactlyTheDifferingKeys()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        divergeByHand();

        TestingCommand repair = pgsink("repair", properties);

        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out())
                .contains("[REPAIRED] \"public\".\"orders\": 3 rows written from the source, 1 row removed")
                .contains("[REPAIRED] \"public\".\"items\": 2 rows written from the source, 0 rows removed")
                .contains("pgsink repair: 5 rows written, 1 row removed, as of source ")
                .doesNotContain("changed");
        assertThat(target.query(ORDERS)).isEqualTo(source.query(ORDERS));
        assertThat(target.query(ITEMS)).isEqualTo(source.query(ITEMS));
        TestingCommand verify = verify(properties);
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        TestingCommand again = pgsink("repair", properties);
        assertThat(again.out()).contains("pgsink repair: nothing to repair, every table is equal");
    }

    @Test
    void repairUnderLiveWorkload()
            throws Exception
    {
        Map<String, String> properties = configuration();
        try (RunningService running = RunningService.start(properties)) {
            try (LiveWorkload workload = new LiveWorkload(source)) {
                awaitStreaming(running);
                divergeByHand();
                workload.awaitMore(20);

                repairThenVerifyClean(properties, workload, running);
            }
            // the stream applies on top of the repair: once quiet, the tables are equal
            awaitEqual(running, ORDERS);
            awaitEqual(running, ITEMS);
        }
    }

    /**
     * Repair applies through the service's path: metadata columns and soft-delete columns are written as a
     * streamed change writes them, TOASTed values whole, and the stored position and writer generation stay.
     */
    @Test
    void repairAppliesLikeTheServiceWithMetadataAndSoftDeletes()
            throws Exception
    {
        Map<String, String> properties = configuration();
        properties.put("delete.mode", "soft");
        properties.put("delete.flag.column", "_deleted");
        properties.put("delete.timestamp.column", "_deleted_at");
        properties.put("metadata.operation.column", "_op");
        properties.put("metadata.source.position.column", "_position");
        properties.put("metadata.applied.timestamp.column", "_applied");
        String orders = "SELECT id, status, amount, note FROM public.orders ORDER BY id";
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, orders);
            awaitEqual(running, "SELECT \"Order\", line, sku FROM public.items ORDER BY 1, 2");
        }
        String state = "SELECT * FROM public.pgsink_offsets WHERE sink_name = '" + sinkName + "' ORDER BY 1, 2";
        List<List<String>> stored = target.query(state);
        target.execute(
                "UPDATE public.orders SET status = 'changed' WHERE id = 1010",
                "UPDATE public.orders SET note = overlay(note placing 'X' from 5000 for 1) WHERE id = 30",
                "DELETE FROM public.orders WHERE id = 1500",
                "UPDATE public.orders SET _deleted = true WHERE id = 200",
                "INSERT INTO public.orders (id, status, _deleted) VALUES (99999, 'extra', false)");

        TestingCommand repair = pgsink("repair", properties);

        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out())
                .contains("[REPAIRED] \"public\".\"orders\": 4 rows written from the source, 1 row removed")
                .contains("pgsink repair: 4 rows written, 1 row removed, as of source ");
        String lsn = repair.out().replaceAll("(?s).*as of source ([0-9A-F]+/[0-9A-F]+).*", "$1");
        String repaired = "SELECT id, status, amount, md5(note) FROM public.orders"
                + " WHERE id IN (30, 200, 1010, 1500) ORDER BY id";
        assertThat(target.query(repaired)).isEqualTo(source.query(repaired));
        assertThat(target.query("SELECT id, _deleted, _deleted_at IS NULL, _op, _position, _applied IS NOT NULL"
                + " FROM public.orders WHERE id IN (30, 200, 1010, 1500, 99999) ORDER BY id"))
                .containsExactly(List.of("30", "f", "t", "u", lsn, "t"), List.of("200", "f", "t", "u", lsn, "t"),
                        List.of("1010", "f", "t", "u", lsn, "t"), List.of("1500", "f", "t", "u", lsn, "t"),
                        List.of("99999", "t", "f", "d", lsn, "t"));
        assertThat(target.query(state)).as("stored positions and writer generations").isEqualTo(stored);
        TestingCommand verify = verify(properties);
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
    }

    /**
     * A repair killed with SIGKILL while its apply is under way (it waits for a target row this test holds) loses
     * nothing: none of its writes commits, the service's flushes it held back go on, and a repair run again
     * leaves the tables equal.
     */
    @Test
    void repairKilledMidwayLosesNothing()
            throws Exception
    {
        Map<String, String> properties = configuration();
        Path config = TestingCommand.configFile(directory.resolve("repair.properties"), properties);
        String position = "SELECT source_offset FROM public.pgsink_offsets WHERE sink_name = '" + sinkName + "'";
        try (RunningService running = RunningService.start(properties)) {
            try (LiveWorkload workload = new LiveWorkload(source)) {
                awaitStreaming(running);
                divergeByHand();
                List<List<String>> held;
                try (Connection holder = target.connect()) {
                    holder.setAutoCommit(false);
                    long holderPid = holdRow(holder, 1010);
                    Path log = directory.resolve("repair.log");
                    Process repair = TestingCommand.startCommand(log, log, List.of("-Xmx256m"), List.of("repair",
                            "--config", config.toString(), "--chunk-rows", "1000", "--catch-up-timeout-ms", "60000"));
                    try {
                        ServiceProcess.awaitProgress(repair, log, "the repair to apply, waiting for the held row",
                                CATCH_UP, () -> assertThat(blockedBy(holderPid)).isEqualTo(1));
                        held = target.query(position);
                        repair.destroyForcibly();
                        assertThat(repair.waitFor()).isEqualTo(137);
                    }
                    finally {
                        repair.destroyForcibly();
                    }
                    holder.rollback();
                }
                // the service's flushes, held by the killed repair's lock, go on
                RunningService.await("the stored position to move on", CATCH_UP,
                        () -> assertThat(target.query(position)).isNotEqualTo(held));
                assertThat(target.query("SELECT status FROM public.orders WHERE id = 1010"))
                        .as("nothing of the killed repair committed").containsExactly(List.of("changed"));

                repairThenVerifyClean(properties, workload, running);
            }
            awaitEqual(running, ORDERS);
            awaitEqual(running, ITEMS);
        }
    }

    /**
     * The race of a repair with the running service: a source change of a repaired key, committed after the
     * repair read the key, waits in the service until the repair committed, and lands on top of it (without
     * the repair's lock on the sink's offsets rows, the repair could write its older row over it).
     */
    @Test
    void changesDuringARepairLandAfterIt()
            throws Exception
    {
        Map<String, String> properties = configuration();
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, ORDERS);
            awaitEqual(running, ITEMS);
            target.execute("UPDATE public.orders SET status = 'changed' WHERE id = 1010");
            CompletableFuture<TestingCommand> repair;
            try (Connection holder = target.connect()) {
                holder.setAutoCommit(false);
                long holderPid = holdRow(holder, 1010);
                repair = CompletableFuture.supplyAsync(() -> {
                    try {
                        return pgsink("repair", properties, "--catch-up-timeout-ms", "60000");
                    }
                    catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                RunningService.await("the repair to apply, waiting for the held row", CATCH_UP,
                        () -> assertThat(blockedBy(holderPid)).isEqualTo(1));
                source.execute("UPDATE public.orders SET status = 'after the repair read' WHERE id = 1010");
                RunningService.await("the service's flush to wait for the repair", CATCH_UP, () -> {
                    running.assertRunning();
                    assertThat(target.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND datname = current_database()")).containsExactly(List.of("2"));
                });
                holder.rollback();
            }
            TestingCommand repaired = repair.get(CATCH_UP.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(repaired.exitCode()).as(repaired.out() + repaired.err()).isZero();
            assertThat(repaired.out()).contains("pgsink repair: 1 row written, 0 rows removed");
            RunningService.await("the service's change on top of the repair", CATCH_UP,
                    () -> assertThat(target.query("SELECT status FROM public.orders WHERE id = 1010"))
                            .containsExactly(List.of("after the repair read")));
            TestingCommand verify = verify(properties, "--catch-up-timeout-ms", "60000");
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            running.assertRunning();
        }
    }

    /** Repairs {@link #divergeByHand}'s keys under the live workload, then verifies: clean. */
    private void repairThenVerifyClean(Map<String, String> properties, LiveWorkload workload, RunningService running)
            throws Exception
    {
        TestingCommand repair = pgsink("repair", properties, "--catch-up-timeout-ms", "60000");

        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(repair.out()).contains("pgsink repair: 5 rows written, 1 row removed");
        workload.awaitMore(20);
        TestingCommand verify = verify(properties, "--catch-up-timeout-ms", "60000");
        assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
        running.assertRunning();
    }

    /** Locks the target row of order {@code id} in {@code holder}'s transaction; returns the holder's backend pid. */
    private static long holdRow(Connection holder, long id)
            throws Exception
    {
        try (Statement statement = holder.createStatement()) {
            statement.executeQuery("SELECT 1 FROM public.orders WHERE id = " + id + " FOR UPDATE").close();
            try (ResultSet pid = statement.executeQuery("SELECT pg_backend_pid()")) {
                pid.next();
                return pid.getLong(1);
            }
        }
    }

    /** How many target sessions wait for a lock that backend {@code pid} holds. */
    private int blockedBy(long pid)
            throws Exception
    {
        return Integer.parseInt(target.query("SELECT count(*) FROM pg_stat_activity WHERE " + pid
                + " = ANY(pg_blocking_pids(pid))").get(0).get(0));
    }

    /**
     * A changed value, a deleted row, an extra row, a changed TOASTed value, and two composite keys: keys the
     * live workload leaves alone.
     */
    private void divergeByHand()
            throws Exception
    {
        target.execute(
                "UPDATE public.orders SET status = 'changed' WHERE id = 1010",
                "DELETE FROM public.orders WHERE id = 1500",
                "INSERT INTO public.orders VALUES (99999, 'extra', 1, NULL)",
                "UPDATE public.orders SET note = overlay(note placing 'X' from 5000 for 1) WHERE id = 2030",
                "DELETE FROM public.items WHERE \"Order\" = 80 AND line = 1",
                "UPDATE public.items SET sku = 'changed' WHERE \"Order\" = 90 AND line = 2");
    }

    /**
     * Captured tables without changes move no stored position: the sink counts as caught up once it received
     * the WAL and its position stood still.
     */
    @Test
    void idleSourceWithTheServiceRunning()
            throws Exception
    {
        Map<String, String> properties = configuration();
        try (RunningService running = RunningService.start(properties)) {
            try (LiveWorkload workload = new LiveWorkload(source)) {
                awaitStreaming(running);
            }
            target.execute("DELETE FROM public.orders WHERE id = 1500");

            TestingCommand result = verify(properties, "--catch-up-timeout-ms", "60000");

            assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
            assertThat(result.out()).contains("    missing: (id)=(1500)").contains("with nothing left to "
                    + "apply").contains("pgsink verify: 2 tables, 1 equal, 1 differing (1 key)");

        }
    }

    @Test
    void routingRenamesExcludedAndMetadataColumns()
            throws Exception
    {
        Map<String, String> properties = configuration();
        properties.put("target.table.name.format", "public.copy_${table}");
        properties.put("column.rename", "public.orders.status:state");
        properties.put("column.exclude.list", "public.orders.amount");
        properties.put("metadata.operation.column", "_op");
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the routed tables", CATCH_UP,
                    () -> assertThat(target.query("SELECT count(*) FROM public.copy_orders"))
                    .containsExactly(List.of("2500")));
            RunningService.await("the routed items", CATCH_UP,
                    () -> assertThat(target.query("SELECT \"Order\", line, sku FROM public.copy_items ORDER BY 1, 2"))
                    .isEqualTo(source.query(ITEMS)));
        }
        // not compared: an excluded column, a metadata column
        source.execute("UPDATE public.orders SET amount = -1 WHERE id = 8");
        target.execute("UPDATE public.copy_orders SET _op = 'x' WHERE id = 9",
                "UPDATE public.copy_orders SET state = 'changed' WHERE id = 7");

        TestingCommand result = verify(properties);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out())
                .contains("[DIFFERS] \"public\".\"orders\" -> \"public\".\"copy_orders\": 1 key differs "
                        + "(missing 0, extra 0, different 1)")
                .contains("    different: (id)=(7)\n")
                .contains("[ EQUAL ] \"public\".\"items\" -> \"public\".\"copy_items\"");
        TestingCommand repair = pgsink("repair", properties);
        assertThat(repair.out()).as(repair.out()
                + repair.err()).contains("pgsink repair: 1 row written, 0 rows removed");
        // through the service's apply path: the metadata column says what wrote the row
        assertThat(target.query("SELECT state, _op FROM public.copy_orders WHERE id = 7"))
                .containsExactly(List.of("new", "u"));
        assertThat(verify(properties).exitCode()).isZero();
    }

    @Test
    void softDeletedRowsCountAsAbsent()
            throws Exception
    {
        Map<String, String> properties = configuration();
        properties.put("delete.mode", "soft");
        properties.put("delete.flag.column", "_deleted");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, "SELECT id FROM public.orders ORDER BY id");
            source.execute("DELETE FROM public.orders WHERE id <= 100");
            RunningService.await("soft deletes", CATCH_UP,
                    () -> assertThat(target.query("SELECT count(*) FROM public.orders WHERE "
                            + "_deleted")).containsExactly(List.of("100")));
        }
        target.execute("UPDATE public.orders SET _deleted = true WHERE id = 200");

        TestingCommand result = verify(properties);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out()).contains("[DIFFERS] \"public\".\"orders\": 1 key differs (missing 1, extra "
                + "0, different 0); 2400 source rows, 2399 target rows")
                .contains("    missing: (id)=(200)");
        target.execute("INSERT INTO public.orders (id, status) VALUES (99999, 'extra')");

        TestingCommand repair = pgsink("repair", properties);

        assertThat(repair.out()).as(repair.out()
                + repair.err()).contains("pgsink repair: 1 row written, 1 row removed");
        assertThat(target.query("SELECT id, _deleted FROM public.orders WHERE id IN (200, 99999) ORDER BY "
                + "id")).containsExactly(List.of("200", "f"), List.of("99999", "t"));
        assertThat(verify(properties).exitCode()).isZero();
    }

    /**
     * A Kafka Connect sink's properties, with the source given apart: its routing, column selection and metadata
     * columns are taken into account, its Connect keys ignored; a history table or a topic pattern that names no
     * table is refused.
     */
    @Test
    void kafkaConnectSinkConfiguration()
            throws Exception
    {
        Map<String, String> properties = configuration();
        properties.put("target.table.name.format", "public.copy_${table}");
        properties.put("column.exclude.list", "public.orders.amount");
        properties.put("metadata.operation.column", "_op");
        try (RunningService running = RunningService.start(properties)) {
            RunningService.await("the routed tables", CATCH_UP, () -> {
                running.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.copy_orders")).containsExactly(List.of("2500"));
                assertThat(target.query("SELECT \"Order\", line, sku FROM public.copy_items ORDER BY 1, 2"))
                        .isEqualTo(source.query(ITEMS));
            });
        }
        Map<String, String> connector = new HashMap<>(target.targetProperties());
        connector.put("name", sinkName);
        connector.put("connector.class", "io.pgsink.connector.kafka.PgsinkSinkConnector");
        connector.put("tasks.max", "2");
        connector.put("topics", "shop.public.orders,shop.public.items");
        connector.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        connector.put("value.converter.replace.null.with.default", "false");
        connector.put("errors.tolerance", "none");
        connector.put("target.table.name.format", "public.copy_${table}");
        connector.put("column.exclude.list", "public.orders.amount");
        connector.put("metadata.operation.column", "_op");
        String sourceUrl = "jdbc:postgresql://" + source.host() + ":" + source.port() + "/" + source.name()
                + (source.password() == null ? "" : "?password=" + source.password());
        List<String> arguments = new ArrayList<>(List.of("--source-url", sourceUrl, "--source-user", source.user(),
                "--chunk-rows", "1000", "--catch-up-timeout-ms", "1000"));
        source.execute("UPDATE public.orders SET amount = -1 WHERE id = 8");
        target.execute("UPDATE public.copy_orders SET status = 'changed' WHERE id = 7",
                "DELETE FROM public.copy_items WHERE \"Order\" = 80 AND line = 1");

        TestingCommand result = connectorCommand("verify", connector, arguments);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out())
                .contains("[DIFFERS] \"public\".\"orders\" -> \"public\".\"copy_orders\": 1 key differs "
                        + "(missing 0, extra 0, different 1)")
                .contains("    different: (id)=(7)\n")
                .contains("    missing: (Order, line)=(80, 1)")
                .contains("after their source rows stood still for 1000 ms");
        TestingCommand repair = connectorCommand("repair", connector, arguments);
        assertThat(repair.exitCode()).as(repair.out() + repair.err()).isZero();
        assertThat(connectorCommand("verify", connector, arguments).exitCode()).isZero();

        connector.put("topics.regex", "shop\\..*");
        connector.remove("topics");
        TestingCommand pattern = connectorCommand("verify", connector, arguments);
        assertThat(pattern.exitCode()).isEqualTo(2);
        assertThat(pattern.err()).contains("topics.regex names no table: name the compared tables with"
                + " --source-tables");
        arguments.addAll(List.of("--source-tables", "public.orders,public.items"));
        connector.put("history.table.include.list", "public.items");
        connector.put("metadata.source.position.column", "_position");
        TestingCommand history = connectorCommand("verify", connector, arguments);
        assertThat(history.exitCode()).isEqualTo(2);
        assertThat(history.err()).contains("\"public\".\"items\" is a history table");
    }

    private TestingCommand connectorCommand(String command, Map<String, String> connector, List<String> arguments)
            throws Exception
    {
        List<String> args = new ArrayList<>(List.of(command, "--connector-config",
                TestingCommand.configFile(directory.resolve("connector.properties"), connector).toString()));
        args.addAll(arguments);
        return TestingCommand.run(args.toArray(String[]::new));
    }

    @Test
    void historyTablesAreAConfigurationProblem()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        properties.put("history.table.include.list", "public.items");
        properties.put("metadata.operation.column", "_op");
        properties.put("metadata.source.position.column", "_position");

        TestingCommand result = verify(properties);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(2);
        assertThat(result.err()).contains("pgsink: Cannot verify: \"public\".\"items\" is a history table");
    }

    /**
     * {@code --http-port} serves each table's progress while verify compares: the target's items are
     * locked, so their one key range waits while the orders' three ranges are compared, and the
     * scrape at that moment finds the orders done and the items started, then the lock is let go.
     */
    @Test
    void servesTheProgressPerTableWhileComparing()
            throws Exception
    {
        Map<String, String> properties = configuration();
        streamAndStop(properties);
        target.execute("UPDATE public.orders SET status = 'changed' WHERE id = 10");
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Path json = directory.resolve("report.json");
        HttpClient client = HttpClient.newHttpClient();
        HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build();
        String orders = "{sink=\"" + sinkName + "\",table=\"public.orders\"}";
        String items = "{sink=\"" + sinkName + "\",table=\"public.items\"}";
        CompletableFuture<TestingCommand> verifying;
        try (Connection holder = target.connect(); Statement statement = holder.createStatement()) {
            holder.setAutoCommit(false);
            statement.execute("LOCK TABLE public.items IN ACCESS EXCLUSIVE MODE");
            verifying = CompletableFuture.supplyAsync(() -> {
                try {
                    return verify(properties, "--http-port", String.valueOf(port), "--json", json.toString());
                }
                catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            RunningService.await("the orders compared while the items wait", CATCH_UP, () -> {
                assertThat(verifying).as("verify still runs").isNotDone();
                String metrics = client.send(scrape, HttpResponse.BodyHandlers.ofString()).body();
                assertThat(metrics)
                        .contains("pgsink_verify_ranges" + orders + " 3.0")
                        .contains("pgsink_verify_ranges_done" + orders + " 3.0")
                        .contains("pgsink_verify_rows_compared" + orders + " 2500.0")
                        .contains("pgsink_verify_differing_keys" + orders + " 1.0")
                        .contains("pgsink_verify_ranges" + items + " 1.0")
                        .contains("pgsink_verify_ranges_done" + items + " 0.0")
                        .contains("pgsink_verify_differing_keys" + items + " 0.0")
                        .containsPattern("pgsink_verify_elapsed_seconds" + Pattern.quote(orders) + " \\d");
            });
            holder.rollback();
        }
        TestingCommand result = verifying.get(CATCH_UP.toSeconds(), TimeUnit.SECONDS);

        assertThat(result.exitCode()).as(result.out() + result.err()).isEqualTo(1);
        assertThat(result.out()).contains("pgsink verify: 2 tables, 1 equal, 1 differing (1 key)");
        JsonNode report = new ObjectMapper().readTree(json.toFile());
        for (JsonNode table : report.get("tables")) {
            assertThat(table.get("elapsedMillis").asLong()).as(table.toString()).isNotNegative();
        }
        // the endpoint ends with the command
        assertThatThrownBy(() -> client.send(scrape, HttpResponse.BodyHandlers.ofString()))
                .isInstanceOf(ConnectException.class);
    }

    /**
     * Source transactions on the compared tables until closed: updates of orders 1 to 1000 and of
     * items of orders 1 to 50, inserts of new orders and deletes of some of them, so that keys
     * appear, change and vanish while verify reads.
     */
    protected static final class LiveWorkload
            implements AutoCloseable
    {
        private final AtomicBoolean stopping = new AtomicBoolean();
        private final AtomicLong transactions = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;

        LiveWorkload(TestingDatabase source)
        {
            thread = new Thread(() -> {
                Random random = new Random(31);
                try (Connection connection = source.connect();
                        PreparedStatement update = connection.prepareStatement("UPDATE public.orders SET "
                                + "amount = amount + 1, status = 'live' WHERE id = ?");
                        PreparedStatement insert = connection.prepareStatement("INSERT INTO public.orders "
                                + "VALUES (?, 'live', 1, NULL)");
                        PreparedStatement delete = connection.prepareStatement("DELETE FROM public.orders "
                                + "WHERE id = ?");
                        PreparedStatement item = connection.prepareStatement("UPDATE public.items SET sku = "
                                + "sku || '.' WHERE \"Order\" = ?")) {
                    connection.setAutoCommit(false);
                    long next = 100_000;
                    while (!stopping.get()) {
                        update.setLong(1, 1 + random.nextInt(1000));
                        update.executeUpdate();
                        insert.setLong(1, next++);
                        insert.executeUpdate();
                        if (next % 3 == 0) {
                            delete.setLong(1, next - 2);
                            delete.executeUpdate();
                        }
                        item.setLong(1, 1 + random.nextInt(50));
                        item.executeUpdate();
                        connection.commit();
                        transactions.incrementAndGet();
                        // a steady stream, not a flood: the machine's cores are shared
                        Thread.sleep(5);
                    }
                }
                catch (Throwable e) {
                    failure.set(e);
                }
            }, "verify-live-workload");
            thread.start();
        }

        /** Waits until {@code count} more transactions committed; returns how many did in all. */
        long awaitMore(long count)
        {
            long target = transactions.get() + count;
            RunningService.await("the live workload to commit " + count + " more transactions", CATCH_UP, () -> {
                if (failure.get() != null) {
                    throw new IllegalStateException("the live workload failed", failure.get());
                }
                assertThat(transactions.get()).isGreaterThanOrEqualTo(target);
            });
            return transactions.get();
        }

        @Override
        public void close()
                throws InterruptedException
        {
            stopping.set(true);
            thread.join(CATCH_UP.toMillis());
            if (failure.get() != null) {
                throw new AssertionError("the live workload failed", failure.get());
            }
        }
    }
}
