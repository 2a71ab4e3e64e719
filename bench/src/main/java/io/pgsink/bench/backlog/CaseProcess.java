package io.pgsink.bench.backlog;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/** A case's JVM, started: its process, when, and the files it reads and writes. */
record CaseProcess(Process process, long spawnedMillis, String slot, Path directory)
{
    /** Starts a {@link BacklogCase} JVM with {@code jvmArgs} that reads {@code input}. */
    static CaseProcess start(Properties input, String slot, String jvmArgs)
            throws IOException
    {
        Path directory = Files.createTempDirectory("pgsink-backlog-");
        Path inputFile = directory.resolve("input.properties");
        Path outputFile = directory.resolve("output.properties");
        Path log = directory.resolve("case.log");
        try (OutputStream out = Files.newOutputStream(inputFile)) {
            input.store(out, null);
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : jvmArgs.trim().split("\\s+")) {
            if (!arg.isEmpty()) {
                command.add(arg);
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(BacklogCase.class.getName());
        command.add(inputFile.toString());
        command.add(outputFile.toString());
        long spawned = System.currentTimeMillis();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .start();
        return new CaseProcess(process, spawned, slot, directory);
    }

    Path inputFile()
    {
        return directory.resolve("input.properties");
    }

    Path outputFile()
    {
        return directory.resolve("output.properties");
    }

    Path log()
    {
        return directory.resolve("case.log");
    }

    /** Waits for the JVM of case {@code name} to end and reads what it measured. */
    Properties await(String name)
            throws IOException, InterruptedException
    {
        Path inputFile = inputFile();
        Path outputFile = outputFile();
        Path log = log();
        if (!process.waitFor(30, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("case " + name + " did not finish in 30 minutes; its log: " + log);
        }
        if (process.exitValue() != 0 || !Files.exists(outputFile)) {
            throw new IllegalStateException("case " + name + " failed (exit " + process.exitValue()
                    + "); its log: " + log + "\n" + tail(log));
        }
        Properties output = new Properties();
        try (InputStream in = Files.newInputStream(outputFile)) {
            output.load(in);
        }
        // kept when the case fails, for its log
        for (Path file : List.of(inputFile, outputFile, log, directory)) {
            Files.delete(file);
        }
        return output;
    }

    private static String tail(Path log)
            throws IOException
    {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
