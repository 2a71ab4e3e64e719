package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code source.slot.failover=true}: on a PostgreSQL 17 source the slot pgsink creates for the
 * initial load's exported snapshot is a failover slot ({@code pg_replication_slots.failover}) and
 * streaming goes on from it; {@code pgsink check} reports what the primary shows of slot
 * synchronization. On a PostgreSQL 15 source {@code run} refuses the key with exit 2 and
 * {@code check} fails, both naming the key and the server's version.
 */
class FailoverSlotIT
{
    private static final Duration CATCH_UP = Duration.ofSeconds(90);
    private static final String ITEMS = "SELECT id, note FROM public.items ORDER BY id";

    private static Map<String, String> properties(TestingPipeline pipeline)
    {
        Map<String, String> properties = pipeline.properties("public.items");
        properties.put("source.slot.failover", "true");
        properties.put("flush.interval.ms", "200");
        return properties;
    }

    @Test
    @Timeout(300)
    void postgresql17CreatesAFailoverSlotAndStreams(@TempDir Path directory)
            throws Exception
    {
        try (TestingPipeline pipeline = TestingPipeline.create("failover", TestingPostgreSqlServer.get(17), TestingPostgreSqlServer.target())) {
            TestingDatabase source = pipeline.source();
            TestingDatabase target = pipeline.target();
            String sinkName = pipeline.sinkName();
            source.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)",
                    "INSERT INTO public.items SELECT g, 'loaded' FROM generate_series(1, 20) g");
            target.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
            Map<String, String> properties = properties(pipeline);
            String slotFailover = "SELECT failover FROM pg_catalog.pg_replication_slots WHERE slot_name = '"
                    + sinkName + "'";
            try (RunningService running = RunningService.start(properties)) {
                InitialLoadIT.awaitStreaming(running);
                assertThat(source.query(slotFailover)).containsExactly(List.of("t"));
                source.execute("INSERT INTO public.items VALUES (21, 'streamed')",
                        "UPDATE public.items SET note = 'changed' WHERE id = 1");
                pipeline.awaitEqual(running, ITEMS, CATCH_UP);
            }
            assertThat(source.query(slotFailover)).containsExactly(List.of("t"));

            String subject = "source " + source.host() + ":" + source.port() + "/" + source.name() + ": ";
            Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
            TestingCommand check = TestingCommand.run("check", "--config", file.toString());
            assertThat(check.out())
                    .contains("[ OK ] " + subject + "replication slot " + sinkName + " is a failover slot")
                    .contains("[WARN] " + subject + "synchronized_standby_slots is empty")
                    .contains("[WARN] " + subject + "the standby is out of sight; for " + sinkName
                            + " to survive a failover it needs sync_replication_slots=on, hot_standby_feedback=on,"
                            + " primary_slot_name set, and dbname in primary_conninfo")
                    .doesNotContain("[FAIL]");
            assertThat(check.exitCode()).as(check.out()).isZero();
        }
    }

    @Test
    @Timeout(180)
    void postgresql15RefusesTheKey(@TempDir Path directory)
            throws Exception
    {
        try (TestingPipeline pipeline = TestingPipeline.create("failover", TestingPostgreSqlServer.get(15), TestingPostgreSqlServer.target())) {
            TestingDatabase source = pipeline.source();
            TestingDatabase target = pipeline.target();
            String sinkName = pipeline.sinkName();
            source.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
            target.execute("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
            Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"),
                    properties(pipeline));
            String version = source.query("SELECT current_setting('server_version')").get(0).get(0);
            String problem = "Invalid value true for configuration source.slot.failover:"
                    + " failover slots need PostgreSQL 17 or later, the source " + source.host() + ":" + source.port()
                    + " runs PostgreSQL " + version + " (remove source.slot.failover or upgrade the source)";

            TestingCommand run = TestingCommand.run("run", "--config", file.toString());
            assertThat(run.err()).isEqualTo("pgsink: " + problem + "\n");
            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(source.query("SELECT count(*) FROM pg_catalog.pg_replication_slots WHERE slot_name = '"
                    + sinkName + "'")).containsExactly(List.of("0"));

            TestingCommand check = TestingCommand.run("check", "--config", file.toString());
            assertThat(check.out())
                    .contains("[FAIL] source " + source.host() + ":" + source.port() + "/" + source.name() + ": "
                            + problem);
            assertThat(check.exitCode()).isEqualTo(1);
        }
    }
}
