package io.pgsink.bench.backlog;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The JVM options the distribution's launcher ({@code connector/standalone/src/dist/bin/pgsink}) gives
 * {@code pgsink run} for a configuration, so a benchmark runs the service as users do: the launcher
 * runs with a stand-in {@code java} ({@code echo}) and without {@code JAVA_OPTS}, and the arguments it
 * prints before {@code -jar} are the options.
 */
final class LauncherJvmOptions
{
    static final Path LAUNCHER = Path.of("connector/standalone/src/dist/bin/pgsink");

    private LauncherJvmOptions() {}

    /** The options for a service configuration; the launcher is looked up from the working directory upwards. */
    static List<String> forRun(Map<String, String> serviceConfig)
            throws IOException, InterruptedException
    {
        Path launcher = find();
        Path config = Files.createTempFile("pgsink-launcher-", ".properties");
        try {
            Properties properties = new Properties();
            properties.putAll(serviceConfig);
            try (OutputStream out = Files.newOutputStream(config)) {
                properties.store(out, null);
            }
            ProcessBuilder builder = new ProcessBuilder("bash", launcher.toString(), "run", "--config",
                    config.toString()).redirectErrorStream(true);
            builder.environment().keySet().removeIf(name -> name.startsWith("PGSINK_") || name.equals("JAVA_OPTS")
                    || name.equals("JAVA_HOME"));
            builder.environment().put("JAVA", "echo");
            builder.environment().put("PGSINK_JAR", "launcher.jar");
            Process process = builder.start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(1, TimeUnit.MINUTES) || process.exitValue() != 0) {
                throw new IllegalStateException("the launcher " + launcher + " failed: " + output);
            }
            List<String> options = new ArrayList<>();
            for (String argument : output.split("\\s+")) {
                if (argument.equals("-jar")) {
                    return List.copyOf(options);
                }
                options.add(argument);
            }
            throw new IllegalStateException("the launcher " + launcher + " printed no -jar: " + output);
        }
        finally {
            Files.delete(config);
        }
    }

    private static Path find()
    {
        for (Path directory = Path.of("").toAbsolutePath(); directory != null; directory = directory.getParent()) {
            if (Files.isRegularFile(directory.resolve(LAUNCHER))) {
                return directory.resolve(LAUNCHER);
            }
        }
        throw new IllegalStateException("no " + LAUNCHER + " in the working directory or above it; run the "
                + "benchmark from the repository, or pass --jvm-args");
    }
}
