package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One run of the {@code pgsink} command line in this JVM, with what it printed.
 *
 * @param exitCode what {@code pgsink} would exit with
 * @param out what it printed to standard output
 * @param err what it printed to standard error
 */
public record TestingCommand(int exitCode, String out, String err)
{
    public static TestingCommand run(String... args)
    {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exitCode = PgsinkCommand.execute(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new TestingCommand(exitCode, out.toString(), err.toString());
    }

    /** Writes {@code properties} to {@code file}, in key order, for {@code --config}; returns the file. */
    public static Path configFile(Path file, Map<String, String> properties)
            throws IOException
    {
        List<String> lines = new ArrayList<>();
        new TreeMap<>(properties).forEach((key, value) -> lines.add(key + "=" + value));
        Files.write(file, lines);
        return file;
    }

    /**
     * {@code pgsink run --config FILE} as its own JVM from the runnable jar ({@code mvn package}
     * builds it), everything it writes going to {@code log}; {@code PGSINK_*} variables of this
     * environment are not passed on.
     */
    public static Process startProcess(Path config, Path log, String... jvmOptions)
            throws IOException
    {
        return startProcess(config, log, log, jvmOptions);
    }

    /** {@link #startProcess(Path, Path, String...)}, standard output to {@code out}, standard error to {@code err}. */
    public static Process startProcess(Path config, Path out, Path err, String... jvmOptions)
            throws IOException
    {
        return startCommand(out, err, List.of(jvmOptions), List.of("run", "--config", config.toString()));
    }

    /**
     * {@code pgsink ARGUMENTS} as its own JVM from the runnable jar, with {@code jvmOptions}; standard output
     * to {@code out}, standard error to {@code err} (the same file for both when equal).
     */
    static Process startCommand(Path out, Path err, List<String> jvmOptions, List<String> arguments)
            throws IOException
    {
        Path jar = Path.of(System.getProperty("pgsink.jar", "target/pgsink.jar"));
        if (!Files.exists(jar)) {
            throw new IllegalStateException("the runnable jar " + jar + " is missing: mvn package builds it");
        }
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(arguments);
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile());
        if (out.equals(err)) {
            builder.redirectErrorStream(true);
        }
        else {
            builder.redirectError(err.toFile());
        }
        builder.environment().keySet().removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX));
        return builder.start();
    }
}
