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
 * A clean stop is a success: {@code pgsink run} as its own JVM (the runnable jar), stopped by
 * SIGTERM (systemd, docker stop, kubectl) or SIGINT (Ctrl-C) while it streams, exits 0 after its
 * last flush; the moment is the service's log line saying it streams, never a sleep.
 */
class StopSignalIT
{
    private static final Duration PROGRESS_TIMEOUT = Duration.ofMinutes(3);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("signal");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        source.execute("CREATE TABLE public.items (id int PRIMARY KEY, name text)");
        target.execute("CREATE TABLE public.items (id int PRIMARY KEY, name text)");
    }

    @Test
    void sigtermAndSigintStopWithExitCodeZero(@TempDir Path directory)
            throws Exception
    {
        Path config = writeConfig(directory);
        int row = 0;
        for (String signal : List.of("TERM", "INT")) {
            Path log = directory.resolve("pgsink-" + signal + ".log");
            Process process = TestingCommand.startProcess(config, log, "-Xmx256m");
            try {
                ServiceProcess.awaitProgress(process, log, "the service to stream", PROGRESS_TIMEOUT,
                        () -> assertThat(Files.readString(log)).contains("streaming changes from"));
                int id = ++row;
                source.execute("INSERT INTO public.items VALUES (" + id + ", 'before SIG" + signal + "')");
                ServiceProcess.awaitProgress(process, log, "row " + id + " in the target", PROGRESS_TIMEOUT,
                        () -> assertThat(target.query("SELECT count(*) FROM public.items WHERE id = "
                                + id)).containsExactly(List.of("1")));
                Process kill = new ProcessBuilder("kill", "-"
                        + signal, Long.toString(process.pid())).inheritIO().start();
                assertThat(kill.waitFor(30, TimeUnit.SECONDS)).as("kill -" + signal + " returned").isTrue();
                assertThat(kill.exitValue()).as("kill -" + signal).isZero();
                assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("pgsink stopped after SIG" + signal).isTrue();
                assertThat(process.exitValue()).as("exit code after SIG" + signal + "; log:\n"
                        + ServiceProcess.tail(log)).isZero();
                assertThat(Files.readString(log)).as("log after SIG" + signal).doesNotContain("[ERROR]");
            }
            finally {
                process.destroyForcibly();
            }
        }
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public.items");
        return TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
    }
}
