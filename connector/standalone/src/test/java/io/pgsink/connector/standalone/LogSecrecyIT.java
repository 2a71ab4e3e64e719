package io.pgsink.connector.standalone;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Passwords and row values never reach the log above TRACE: the service runs as its own JVM (the
 * runnable jar, its real logging) at DEBUG for every logger, with distinctive passwords and row
 * values, through a snapshot, streaming, rows the target refuses (dead-lettered) and a lost target
 * connection; then the captured stdout/stderr is scanned for them.
 */
class LogSecrecyIT
{
    private static final String MARK = Long.toHexString(System.nanoTime());
    private static final String PASSWORD = "pw-" + MARK + "-never-logged";
    private static final String SNAPSHOT_VALUE = "snapval" + MARK;
    private static final String STREAMED_VALUE = "streamval" + MARK;
    private static final String REJECTED_VALUE = "rejectedval" + MARK;
    private static final String APPLICATION_NAME = "pgsink-log-it";

    private TestingDatabase source;
    private TestingDatabase target;

    @BeforeEach
    void createDatabases()
            throws Exception
    {
        source = TestingDatabase.create("pgsink_log_source");
        target = TestingDatabase.create("pgsink_log_target");
        source.execute("CREATE TABLE public.cards (id int PRIMARY KEY, holder text, code text)");
        target.execute("CREATE TABLE public.cards (id int PRIMARY KEY, holder text, code varchar(40) CHECK (code <> 'forbidden'))");
    }

    @AfterEach
    void dropDatabases()
            throws Exception
    {
        source.close();
        target.close();
    }

    @Test
    void noPasswordOrRowValueInTheDebugLog(@TempDir Path directory)
            throws Exception
    {
        source.execute("INSERT INTO public.cards SELECT g, '" + SNAPSHOT_VALUE + "', 'c' || g FROM generate_series(1, 100) g");
        Path config = writeConfig(directory);
        Path log = directory.resolve("pgsink.log");
        Path jar = Path.of(System.getProperty("pgsink.jar", "target/pgsink.jar"));
        assertThat(jar).as("the runnable jar (mvn package builds it)").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=debug",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka=debug", "-jar", jar.toString(), "run", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX));
        Process process = builder.start();
        try {
            RunningService.await("the snapshot", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs").isTrue();
                assertThat(target.query("SELECT count(*) FROM public.cards")).containsExactly(List.of("100"));
            });
            source.execute(
                    "UPDATE public.cards SET holder = '" + STREAMED_VALUE + "' WHERE id <= 50",
                    // too long for varchar(40), and a check violation: both dead-lettered under errors.tolerance=all
                    "INSERT INTO public.cards VALUES (101, 'x', '" + REJECTED_VALUE + REJECTED_VALUE + REJECTED_VALUE + "')",
                    "INSERT INTO public.cards VALUES (102, '" + REJECTED_VALUE + "', 'forbidden')");
            RunningService.await("the changes and two dead letters", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs").isTrue();
                assertThat(target.query("SELECT count(*) FROM public.cards WHERE holder = '" + STREAMED_VALUE + "'")).containsExactly(List.of("50"));
                assertThat(target.query("SELECT count(*) FROM public.pgsink_dead_letters")).containsExactly(List.of("2"));
            });
            // a lost connection: the retry path logs the server's error
            target.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + APPLICATION_NAME + "'");
            source.execute("UPDATE public.cards SET holder = '" + STREAMED_VALUE + "' WHERE id > 50");
            RunningService.await("the changes after the lost connection", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs").isTrue();
                assertThat(target.query("SELECT count(*) FROM public.cards WHERE holder = '" + STREAMED_VALUE + "'")).containsExactly(List.of("100"));
            });
        }
        finally {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        String output = Files.readString(log);
        assertThat(output).as("the log is at DEBUG").contains("[DEBUG]");
        assertThat(output).as("the skipped rows are logged").contains("skipped a row the target refused");
        assertThat(output).doesNotContain(PASSWORD);
        assertThat(output).doesNotContain(SNAPSHOT_VALUE);
        assertThat(output).doesNotContain(STREAMED_VALUE);
        assertThat(output).doesNotContain(REJECTED_VALUE);
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = new TreeMap<>();
        properties.putAll(source.sourceProperties());
        properties.putAll(target.targetProperties());
        // the test server trusts local connections, so the passwords are never checked, only (not) logged
        properties.put("source.database.password", PASSWORD);
        properties.put("target.password", PASSWORD);
        properties.put("source.table.include.list", "public.cards");
        properties.put("source.publication.autocreate.mode", "filtered");
        properties.put("sink.name", TestingDatabase.randomName("logs"));
        properties.put("errors.tolerance", "all");
        properties.put("flush.interval.ms", "100");
        properties.put("http.port", "-1");
        properties.put("progress.interval.ms", "500");
        properties.put("retry.backoff.max.ms", "1000");
        properties.put("target.jdbc.ApplicationName", APPLICATION_NAME);
        List<String> lines = new ArrayList<>();
        properties.forEach((key, value) -> lines.add(key + "=" + value));
        Path file = directory.resolve("pgsink.properties");
        Files.write(file, lines);
        return file;
    }
}
