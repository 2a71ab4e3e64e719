package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.copy.testing.Poll;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The service as its own JVM (the runnable jar), for tests that kill it with SIGKILL. */
public final class ServiceProcess
{
    private ServiceProcess() {}

    /** Starts {@code pgsink run --config config}, appending its output to {@code log}. */
    public static Process start(Path config, Path log)
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

    /** Waits until {@code reached} holds, while the process runs. */
    public static void awaitProgress(Process process, Path log, String what, Duration timeout, RunningService.Check reached)
    {
        awaitProgress(process, log, what, timeout, Duration.ofMillis(200), reached);
    }

    /** As {@link #awaitProgress(Process, Path, String, Duration, RunningService.Check)}, polling every {@code interval}. */
    public static void awaitProgress(Process process, Path log, String what, Duration timeout, Duration interval, RunningService.Check reached)
    {
        Poll.until(what, timeout, interval, () -> {
            if (!process.isAlive()) {
                throw new IllegalStateException("pgsink exited by itself while the test waited for " + what + "; log:\n" + tail(log));
            }
            reached.run();
        });
    }

    /** The last 60 lines of the log. */
    public static String tail(Path log)
            throws Exception
    {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
