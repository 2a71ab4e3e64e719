package io.pgsink.connector.standalone;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly-once in effect, under SIGKILL: the service runs as its own JVM (the runnable jar) while a
 * workload changes the source; it is killed with SIGKILL at random moments (during start-up, the
 * snapshot, streaming, flushes) and restarted each time; at the end the target must equal the
 * source, with nothing lost and nothing applied twice.
 *
 * <p>{@code -Dpgsink.crash.kills=N} (or {@code PGSINK_CRASH_KILLS}) sets the number of kills,
 * {@code -Dpgsink.crash.seed=S} replays a run; {@code src/test/scripts/crash-test.sh} runs it 50
 * times.
 */
class CrashRecoveryIT
{
    private static final String SECRET = "pgsink-crash-test-secret-" + Long.toHexString(System.nanoTime());

    private TestingDatabase source;
    private TestingDatabase target;

    @BeforeEach
    void createDatabases()
            throws Exception
    {
        source = TestingDatabase.create("pgsink_crash_source");
        target = TestingDatabase.create("pgsink_crash_target");
    }

    @AfterEach
    void dropDatabases()
            throws Exception
    {
        source.close();
        target.close();
        assertThat(source.replicationSlots()).isEmpty();
    }

    @Test
    void targetEqualsSourceAfterRepeatedKills(@TempDir Path directory)
            throws Exception
    {
        int kills = Integer.parseInt(System.getProperty("pgsink.crash.kills", System.getenv().getOrDefault("PGSINK_CRASH_KILLS", "10")));
        long seed = Long.parseLong(System.getProperty("pgsink.crash.seed", Long.toString(System.nanoTime())));
        Random random = new Random(seed);
        System.out.println("CrashRecoveryIT: " + kills + " kills, seed " + seed);

        source.execute(DemoWorkload.CREATE_TABLE, DemoWorkload.SOURCE_REPLICA_IDENTITY);
        target.execute(DemoWorkload.CREATE_TABLE);
        try (Connection connection = source.connect()) {
            // enough rows that the snapshot takes a while: kills land in it too
            new DemoWorkload(connection, seed).seed(30_000);
        }
        Path config = writeConfig(directory);
        // kept in the build directory when the test fails: the child JVM's log is the evidence
        Path log = Path.of(System.getenv().getOrDefault("PGSINK_BUILD_DIRECTORY", directory.toString())).resolve("crash-test-" + seed + ".log");
        Files.deleteIfExists(log);

        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> workloadFailure = new AtomicReference<>();
        Thread workload = new Thread(() -> {
            try (Connection connection = source.connect()) {
                DemoWorkload demo = new DemoWorkload(connection, seed + 1);
                while (!stop.get()) {
                    demo.runTransaction();
                    Thread.sleep(5);
                }
            }
            catch (Throwable e) {
                workloadFailure.set(e);
            }
        }, "crash-test-workload");
        workload.start();
        try {
            for (int kill = 1; kill <= kills; kill++) {
                Process process = start(config, log);
                // from "still starting" through snapshot and streaming: JVM and engine start take ~2 s
                long lifetime = 500 + random.nextInt(5000);
                if (kill == 1) {
                    // the first run snapshots the table: kill it in the middle of that
                    lifetime = 1500 + random.nextInt(2500);
                }
                boolean exited = process.waitFor(lifetime, TimeUnit.MILLISECONDS);
                assertThat(exited).as("pgsink exited by itself before kill %s; log:\n%s", kill, tail(log)).isFalse();
                process.destroyForcibly();
                assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
                System.out.println("CrashRecoveryIT: kill " + kill + " of " + kills + " after " + lifetime + " ms");
                assertThat(workloadFailure.get()).isNull();
            }
        }
        finally {
            stop.set(true);
            workload.join();
        }
        assertThat(workloadFailure.get()).isNull();

        Process last = start(config, log);
        try {
            RunningService.await("the target to equal the source", Duration.ofSeconds(180), () -> {
                assertThat(last.isAlive()).as("pgsink is running; log:\n%s", tail(log)).isTrue();
                try (Connection sourceConnection = source.connect(); Connection targetConnection = target.connect()) {
                    assertThat(DemoWorkload.checksum(targetConnection)).isEqualTo(DemoWorkload.checksum(sourceConnection));
                }
            });
        }
        finally {
            // SIGTERM: the shutdown hook stops the service cleanly
            last.destroy();
            if (!last.waitFor(60, TimeUnit.SECONDS)) {
                last.destroyForcibly();
            }
        }
        String output = Files.readString(log);
        assertThat(output).doesNotContain(SECRET);
        assertThat(output).contains("resuming from the position stored in the target");
        Files.delete(log);
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = new TreeMap<>();
        properties.putAll(source.sourceProperties());
        properties.putAll(target.targetProperties());
        // the test server trusts local connections, so the passwords are never used, only (not) logged
        properties.put("source.database.password", SECRET);
        properties.put("target.password", SECRET);
        properties.put("source.table.include.list", "public.orders");
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", TestingDatabase.randomName("crash"));
        // small, frequent flushes: more commits to be killed in the middle of
        properties.put("flush.interval.ms", "50");
        properties.put("flush.max.events", "700");
        properties.put("http.port", "-1");
        properties.put("progress.interval.ms", "1000");
        properties.put("target.jdbc.ApplicationName", "pgsink-connector-it");
        List<String> lines = new ArrayList<>();
        properties.forEach((key, value) -> lines.add(key + "=" + value));
        Path file = directory.resolve("pgsink.properties");
        Files.write(file, lines);
        return file;
    }

    private static Process start(Path config, Path log)
            throws Exception
    {
        Path jar = Path.of(System.getProperty("pgsink.jar", "target/pgsink.jar"));
        assertThat(jar).as("the runnable jar (mvn package builds it)").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx512m", "-jar", jar.toString(), "run", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().keySet().removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX));
        return builder.start();
    }

    private static String tail(Path log)
            throws Exception
    {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
