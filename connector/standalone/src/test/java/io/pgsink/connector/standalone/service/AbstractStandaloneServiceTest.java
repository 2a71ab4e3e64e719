package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Debezium source to target, end to end, on a real PostgreSQL source and a PostgreSQL
 * ({@link StandaloneServiceIT}) or Greenplum ({@link GreenplumStandaloneServiceIT}) target: each test gets a fresh source and
 * target database, runs the standalone service in-process and compares the tables.
 */
abstract class AbstractStandaloneServiceTest
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("it", targetServer());
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();
    private final String sinkName = pipeline.sinkName();

    /** The server the target database is created on; the source is {@link TestingPostgreSqlServer#source()}. */
    protected abstract TestingPostgreSqlServer targetServer();

    /** What ends a target's CREATE TABLE to distribute it by {@code columns}, where the target distributes tables. */
    protected String distributedBy(String columns)
    {
        return "";
    }

    protected final TestingDatabase source()
    {
        return source;
    }

    protected final TestingDatabase target()
    {
        return target;
    }

    protected final Map<String, String> configuration(String includeList)
    {
        Map<String, String> properties = pipeline.properties(includeList);
        properties.put("http.port", "0");
        properties.put("http.host", "127.0.0.1");
        properties.put("progress.interval.ms", "1000");
        // not "pgsink ...": other modules' tests count connections by that application name
        return properties;
    }

    protected final void createBoth(String... sql)
            throws Exception
    {
        pipeline.executeInBoth(sql);
    }

    protected final void awaitEqual(RunningService running, String query)
    {
        pipeline.awaitEqual(running, query, CATCH_UP);
    }

    @Test
    void streamsEveryOperationOfSeveralTablesAndTransactions()
            throws Exception
    {
        createBoth(
                "CREATE TABLE public.orders (id bigint PRIMARY KEY, status text NOT NULL, amount numeric(12,2), note text)",
                "CREATE TABLE public.\"Order Items\" (\"Order\" bigint, line int, sku text, qty int, PRIMARY KEY (\"Order\", line))",
                "CREATE TABLE public.events (id bigint PRIMARY KEY, payload jsonb)");
        // rows that exist before the service starts arrive through Debezium's snapshot
        source.execute(
                "INSERT INTO public.orders SELECT g, 'new', g * 1.5, NULL FROM generate_series(1, 200) g",
                "INSERT INTO public.\"Order Items\" SELECT g / 3, g % 3, 'sku-' || g, g FROM generate_series(3, 50) g",
                "INSERT INTO public.events VALUES (1, '{\"a\": 1}')");

        try (RunningService running = RunningService.start(configuration("public.orders,public.Order Items,public.events"))) {
            awaitEqual(running, "SELECT * FROM public.orders ORDER BY id");

            // inserts, updates, deletes
            source.execute(
                    "INSERT INTO public.orders SELECT g, 'new', g, 'inserted' FROM generate_series(201, 300) g",
                    "UPDATE public.orders SET status = 'paid', amount = amount + 1 WHERE id % 3 = 0",
                    "DELETE FROM public.orders WHERE id % 7 = 0",
                    // a key change: Debezium sends a delete of the old key and a create of the new one
                    "UPDATE public.orders SET id = 10000 + id WHERE id IN (1, 2, 3)");
            // several tables in one source transaction
            try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
                connection.setAutoCommit(false);
                statement.execute("INSERT INTO public.orders VALUES (5000, 'new', 1, 'tx')");
                statement.execute("INSERT INTO public.\"Order Items\" VALUES (5000, 1, 'a', 1), (5000, 2, 'b', 2)");
                statement.execute("UPDATE public.\"Order Items\" SET qty = qty * 10 WHERE \"Order\" = 5");
                statement.execute("DELETE FROM public.\"Order Items\" WHERE \"Order\" = 6");
                statement.execute("UPDATE public.events SET payload = '{\"a\": 2, \"b\": [1, 2]}' WHERE id = 1");
                statement.execute("UPDATE public.orders SET status = 'in tx' WHERE id = 5000");
                connection.commit();
            }
            // a large value stored out of line, then an update that leaves it alone: Debezium sends a
            // placeholder for it, and the target keeps the value it has
            source.execute(
                    "UPDATE public.orders SET note = (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g) WHERE id = 10",
                    "UPDATE public.orders SET status = 'after toast' WHERE id = 10");
            // truncate, then new rows: the target is emptied at that point of the stream
            source.execute(
                    "TRUNCATE public.\"Order Items\"",
                    "INSERT INTO public.\"Order Items\" VALUES (1, 1, 'after truncate', 1)");

            awaitEqual(running, "SELECT * FROM public.orders ORDER BY id");
            awaitEqual(running, "SELECT * FROM public.\"Order Items\" ORDER BY 1, 2");
            awaitEqual(running, "SELECT * FROM public.events ORDER BY id");
            assertThat(target.query("SELECT length(note), status FROM public.orders WHERE id = 10")).containsExactly(List.of("6400", "after toast"));
            assertThat(target.query("SELECT count(*) FROM public.\"Order Items\"")).containsExactly(List.of("1"));
            running.assertRunning();

            // the Debezium offset is stored in the target, under the sink's name
            List<List<String>> offsets = target.query("SELECT source_partition, source_offset FROM public.pgsink_offsets WHERE sink_name = '" + sinkName + "'");
            assertThat(offsets).hasSize(1);
            assertThat(offsets.get(0).get(0)).isEqualTo("{\"server\":\"" + sinkName + "\"}");
            assertThat(offsets.get(0).get(1)).contains("\"lsn\":");

            int port = running.service().httpPort();
            HttpClient client = HttpClient.newHttpClient();
            // the counters follow the rows' commit (with flush.pipelined, at the sink's next call: the next engine
            // batch, at the latest the next heartbeat)
            RunningService.await("the truncate's metric", Duration.ofSeconds(60), () -> assertThat(client.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body())
                    .contains("pgsink_truncates_total{sink=\"" + sinkName + "\",table=\"public.Order Items\"} 1.0"));
            HttpResponse<String> metrics = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("text/plain"));
            assertThat(metrics.body())
                    .contains("pgsink_events_in_total{sink=\"" + sinkName + "\"}")
                    .contains("pgsink_rows_applied_total{operation=\"upsert\",sink=\"" + sinkName + "\",table=\"public.orders\"}")
                    .contains("pgsink_rows_applied_total{operation=\"delete\",sink=\"" + sinkName + "\",table=\"public.orders\"}")
                    // the source's truncate (the initial load empties target tables before copying, not through the stream)
                    .contains("pgsink_truncates_total{sink=\"" + sinkName + "\",table=\"public.Order Items\"} 1.0")
                    .contains("pgsink_initial_load_rows_total{sink=\"" + sinkName + "\",table=\"public.orders\"} 200.0")
                    .contains("pgsink_flush_seconds_bucket{")
                    .contains("pgsink_buffer_bytes{")
                    .contains("pgsink_source_lag_seconds{")
                    .contains("pgsink_copy_bytes_total{")
                    // the target connection pool
                    .contains("hikaricp_connections{pool=\"pgsink-" + sinkName + "\"");
            assertThat(running.service().metrics().copyBytesTotal()).isPositive();
            HttpResponse<String> health = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            assertThat(health.body()).contains("\"status\":\"UP\"").contains("\"state\":\"STREAMING\"");
        }
        // nothing left connected to the target (a closed connection's backend exits a moment later)
        RunningService.await("the sink's target connections to close", Duration.ofSeconds(10), () -> assertThat(
                target.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgsink-connector-it' AND datname = '" + target.name() + "'"))
                .containsExactly(List.of("0")));
    }

    /**
     * One source transaction swaps, rotates and hands over unique values between keys: valid at
     * its commit, but the target's unique index beyond the key would refuse the final rows written
     * in place one at a time. The service applies it and keeps running.
     */
    @Test
    void appliesSourceTransactionsThatSwapUniqueValues()
            throws Exception
    {
        String table = "CREATE TABLE public.users (tenant int, id int, email text NOT NULL, n int,"
                + " PRIMARY KEY (tenant, id), UNIQUE (tenant, email))";
        source.execute(table);
        target.execute(table + distributedBy("tenant"));
        source.execute("INSERT INTO public.users SELECT 1, g, 'user' || g, 0 FROM generate_series(1, 20) g");
        try (RunningService running = RunningService.start(configuration("public.users"))) {
            awaitEqual(running, "SELECT * FROM public.users ORDER BY id");
            try (Connection connection = source.connect(); Statement statement = connection.createStatement()) {
                connection.setAutoCommit(false);
                // a swap of keys 1 and 2
                statement.execute("UPDATE public.users SET email = 'tmp' WHERE id = 1");
                statement.execute("UPDATE public.users SET email = 'user1' WHERE id = 2");
                statement.execute("UPDATE public.users SET email = 'user2', n = 1 WHERE id = 1");
                // a rotation over keys 3 to 12: each takes the value the one before it gave up
                statement.execute("UPDATE public.users SET email = 'tmp' WHERE id = 3");
                for (int id = 4; id <= 12; id++) {
                    statement.execute("UPDATE public.users SET email = 'user" + (id - 1) + "' WHERE id = " + id);
                }
                statement.execute("UPDATE public.users SET email = 'user12' WHERE id = 3");
                // a deleted key's value taken by a new key
                statement.execute("DELETE FROM public.users WHERE id = 13");
                statement.execute("INSERT INTO public.users VALUES (1, 21, 'user13', 0)");
                connection.commit();
            }
            awaitEqual(running, "SELECT * FROM public.users ORDER BY id");
            running.assertRunning();
        }
    }

    @Test
    void resumesFromThePositionStoredInTheTarget()
            throws Exception
    {
        createBoth("CREATE TABLE public.items (id int PRIMARY KEY, name text)");
        source.execute("INSERT INTO public.items SELECT g, 'item ' || g FROM generate_series(1, 500) g");
        Map<String, String> properties = configuration("public.items");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
            // copied by the initial load, not streamed
            assertThat(running.service().metrics().initialLoadRowsTotal()).isEqualTo(500);
        }
        // changes while the service is down stay in the slot
        source.execute(
                "UPDATE public.items SET name = 'renamed' WHERE id <= 10",
                "DELETE FROM public.items WHERE id > 490",
                "INSERT INTO public.items VALUES (1000, 'new')");
        try (RunningService running = RunningService.start(properties)) {
            awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
            // resumed from the stored offset: only the 21 changes, no second snapshot of 500 rows
            assertThat(running.service().metrics().eventsInTotal()).isLessThan(100);
        }
    }

    @Test
    void retriesWhenTheTargetConnectionIsLost()
            throws Exception
    {
        createBoth("CREATE TABLE public.items (id int PRIMARY KEY, n int)");
        String sinkConnections = "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgsink-connector-it' AND datname = '" + target.name() + "'";
        Set<String> cut = new HashSet<>();
        try (RunningService running = RunningService.start(configuration("public.items"))) {
            for (int round = 0; round < 5; round++) {
                source.execute("INSERT INTO public.items SELECT g, 0 FROM generate_series(" + (round * 100 + 1) + ", " + (round * 100 + 100) + ") g",
                        "UPDATE public.items SET n = n + 1");
                // applied: after the first round, through a connection opened after the previous cut;
                // caught up, the sink keeps one connection open in its pool, so it is there to be found
                awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
                AtomicReference<List<String>> current = new AtomicReference<>();
                RunningService.await("a target connection of the sink not cut yet", CATCH_UP, () -> {
                    running.assertRunning();
                    List<String> pids = target.query(sinkConnections).stream().map(row -> row.get(0)).filter(pid -> !cut.contains(pid)).toList();
                    assertThat(pids).isNotEmpty();
                    current.set(pids);
                });
                // cut it, as a target restart would: the next round's changes need a new one
                try (Connection connection = target.connect(); Statement statement = connection.createStatement()) {
                    for (String pid : current.get()) {
                        statement.execute("SELECT pg_terminate_backend(" + pid + ")");
                    }
                }
                cut.addAll(current.get());
            }
            source.execute("UPDATE public.items SET n = n + 1 WHERE id % 7 = 0", "DELETE FROM public.items WHERE id % 11 = 0");
            awaitEqual(running, "SELECT * FROM public.items ORDER BY id");
            running.assertRunning();
        }
        // five rounds, each cut a connection the sink had opened after the previous cut
        assertThat(cut).hasSizeGreaterThanOrEqualTo(5);
    }

    @Test
    void stopsWithAClearErrorWhenATargetTableIsMissing()
            throws Exception
    {
        source.execute("CREATE TABLE public.lost (id int PRIMARY KEY)", "INSERT INTO public.lost VALUES (1)");
        RunningService running = RunningService.start(configuration("public.lost"));
        Throwable failure = running.awaitFailure(CATCH_UP);
        assertThat(failure).isInstanceOfSatisfying(SinkException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCode.SCHEMA_MISMATCH));
        assertThat(failure).hasMessageContaining("\"public\".\"lost\"").hasMessageContaining("does not exist");
        assertThat(running.service().state()).isEqualTo(ServiceState.State.FAILED);
        running.service().close();
    }
}
