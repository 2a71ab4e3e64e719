package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Passwords and row values never reach the log above TRACE: the service runs as its own JVM (the
 * runnable jar, its real logging) at DEBUG for every logger, with distinctive passwords and row
 * values, through a snapshot, streaming, rows the target refuses of every kind (value too long,
 * check, not-null and unique violations, a value of the wrong type: dead-lettered under
 * {@code errors.tolerance=all}, stopping the service under {@code none}) and a lost target
 * connection; then everything the process wrote to stdout and stderr is scanned for them.
 */
class LogSecrecyIT
{
    private static final String MARK = Long.toHexString(System.nanoTime());
    private static final String PASSWORD = "pw-" + MARK + "-never-logged";
    private static final String SNAPSHOT_VALUE = "snapval" + MARK;
    private static final String STREAMED_VALUE = "streamval" + MARK;
    private static final String REJECTED_VALUE = "rejectedval" + MARK;
    private static final String UNIQUE_VALUE = "uniqueval" + MARK;
    private static final String TYPE_VALUE = "typeval" + MARK;
    private static final String APPLICATION_NAME = "pgsink-log-it";

    /** Refuses a value too long, 'forbidden' codes, NULL codes, a repeated tag and a non-integer n. */
    private static final String TARGET_CARDS = "CREATE TABLE %s (id int PRIMARY KEY, holder text, code varchar(40) NOT NULL CHECK (code <> 'forbidden'), tag text UNIQUE, n int)";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("log");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.cards (id int PRIMARY KEY, holder text, code text, tag text, n text)");
        target.execute(TARGET_CARDS.formatted("public.cards"));
    }

    @Test
    void noPasswordOrRowValueInTheDebugLog(@TempDir Path directory)
            throws Exception
    {
        source.execute("INSERT INTO public.cards SELECT g, '" + SNAPSHOT_VALUE + "', 'c' || g, CASE WHEN g = 1 THEN '" + UNIQUE_VALUE + "' ELSE 'tag' || g END, g::text"
                + " FROM generate_series(1, 100) g");
        Path config = writeConfig(directory, "public.cards", "all");
        Path log = directory.resolve("pgsink.log");
        Process process = start(config, log);
        try {
            RunningService.await("the snapshot", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs").isTrue();
                assertThat(target.query("SELECT count(*) FROM public.cards")).containsExactly(List.of("100"));
            });
            source.execute("UPDATE public.cards SET holder = '" + STREAMED_VALUE + "' WHERE id <= 50");
            // every kind of refused row, each dead-lettered under errors.tolerance=all
            source.execute(badRows("public.cards", 101));
            RunningService.await("the changes and five dead letters", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs").isTrue();
                assertThat(target.query("SELECT count(*) FROM public.cards WHERE holder = '" + STREAMED_VALUE + "'")).containsExactly(List.of("50"));
                assertThat(target.query("SELECT count(*) FROM public.pgsink_dead_letters")).containsExactly(List.of("5"));
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
        assertNoSecret(output);
    }

    /**
     * Under {@code errors.tolerance=none} each kind of refused row stops the service: the ERROR
     * Debezium's engine logs, with its cause chain, and the one line {@code pgsink run} prints name
     * the row, never its values.
     */
    @Test
    void noRowValueInTheOutputWhenARefusedRowStopsTheService(@TempDir Path directory)
            throws Exception
    {
        String[] kinds = {"value too long", "check violation", "type refusal", "not-null violation", "unique violation"};
        for (int kind = 0; kind < kinds.length; kind++) {
            String table = "public.cards_" + kind;
            source.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, holder text, code text, tag text, n text)",
                    "INSERT INTO " + table + " VALUES (1, '" + SNAPSHOT_VALUE + "', 'c', '" + UNIQUE_VALUE + "', '1')");
            target.execute(TARGET_CARDS.formatted(table));
            Path log = directory.resolve("pgsink-" + kind + ".log");
            Process process = start(writeConfig(directory, table, "none"), log);
            try {
                // the initial load copies the good row; the bad one then comes through the stream
                RunningService.await(kinds[kind] + ": the initial load", Duration.ofSeconds(90), () -> {
                    assertThat(process.isAlive()).as("pgsink runs; log:%n%s", Files.readString(log)).isTrue();
                    assertThat(target.query("SELECT count(*) FROM " + table)).containsExactly(List.of("1"));
                });
                source.execute(badRows(table, 101)[kind]);
                assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s: pgsink stops", kinds[kind]).isTrue();
            }
            finally {
                process.destroyForcibly();
            }
            String output = Files.readString(log);
            assertThat(process.exitValue()).as("%s: the exit code, after:%n%s", kinds[kind], output).isEqualTo(1);
            assertThat(output).as(kinds[kind]).containsPattern("(?m)^pgsink: Cannot write a row of \"public\".\"cards_" + kind + "\" key \\(" + (101 + kind) + "\\)");
            assertThat(output).as(kinds[kind]).contains("[ERROR]");
            assertNoSecret(output);
        }
    }

    /** The insert of one refused row per kind, keys {@code firstKey} on, in the order of the kinds above. */
    private static String[] badRows(String table, int firstKey)
    {
        return new String[] {
                // too long for varchar(40)
                "INSERT INTO " + table + " VALUES (" + firstKey + ", 'x', '" + REJECTED_VALUE + REJECTED_VALUE + REJECTED_VALUE + "', 't101', '1')",
                "INSERT INTO " + table + " VALUES (" + (firstKey + 1) + ", '" + REJECTED_VALUE + "', 'forbidden', 't102', '1')",
                "INSERT INTO " + table + " VALUES (" + (firstKey + 2) + ", '" + REJECTED_VALUE + "', 'c', 't103', '" + TYPE_VALUE + "')",
                "INSERT INTO " + table + " VALUES (" + (firstKey + 3) + ", '" + REJECTED_VALUE + "', NULL, 't104', '1')",
                "INSERT INTO " + table + " VALUES (" + (firstKey + 4) + ", '" + REJECTED_VALUE + "', 'c', '" + UNIQUE_VALUE + "', '1')",
        };
    }

    private static void assertNoSecret(String output)
    {
        assertThat(output).doesNotContain(PASSWORD);
        assertThat(output).doesNotContain(SNAPSHOT_VALUE);
        assertThat(output).doesNotContain(STREAMED_VALUE);
        assertThat(output).doesNotContain(REJECTED_VALUE);
        assertThat(output).doesNotContain(UNIQUE_VALUE);
        assertThat(output).doesNotContain(TYPE_VALUE);
    }

    /** {@code pgsink run} as its own JVM, at DEBUG, everything it writes going to {@code log}. */
    private static Process start(Path config, Path log)
            throws Exception
    {
        return TestingCommand.startProcess(config, log, "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=debug",
                "-Dorg.slf4j.simpleLogger.log.org.apache.kafka=debug", "-Dorg.slf4j.simpleLogger.log.io.debezium=debug",
                "-Dorg.slf4j.simpleLogger.log.com.zaxxer.hikari=debug");
    }

    private Path writeConfig(Path directory, String table, String tolerance)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties(table);
        // a sink (slot, publication) of its own for each table a test streams
        properties.put("sink.name", TestingDatabase.randomName("logs"));
        // the test server trusts local connections, so the passwords are never checked, only (not) logged
        properties.put("source.database.password", PASSWORD);
        properties.put("target.password", PASSWORD);
        properties.put("errors.tolerance", tolerance);
        properties.put("progress.interval.ms", "500");
        properties.put("retry.backoff.max.ms", "1000");
        properties.put("target.jdbc.ApplicationName", APPLICATION_NAME);
        Path file = TestingCommand.configFile(directory.resolve("pgsink-" + table + ".properties"), properties);
        return file;
    }
}
