package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code pgsink} launcher at the repository root (through the distribution's {@code bin/pgsink})
 * gives {@code run} a heap sized from
 * {@code buffer.max.bytes} (4 x it + 256 MiB, at least 512 MiB; as initial heap too, half of it young) unless
 * {@code JAVA_OPTS} sets one.
 * The script runs from a copy beside a placeholder jar (so it builds nothing), with a stand-in
 * {@code java} that prints its arguments.
 */
class LauncherHeapTest
{
    private static final Path SCRIPT = Path.of("../../pgsink");
    private static final Path DISTRIBUTION_SCRIPT = Path.of("src/dist/bin/pgsink");

    private static String javaArguments(Path root, Map<String, String> environment, String... args)
            throws IOException, InterruptedException
    {
        List<String> command = new ArrayList<>(List.of("bash", root.resolve("pgsink").toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true);
        builder.environment().keySet()
                .removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX) || name.equals("JAVA_OPTS"));
        builder.environment().put("JAVA", root.resolve("java").toString());
        builder.environment().putAll(environment);
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the launcher returned").isTrue();
        String output = new String(process.getInputStream().readAllBytes()).strip();
        assertThat(process.exitValue()).as(output).isZero();
        return output;
    }

    @Test
    void runGetsAHeapSizedFromTheBuffer(@TempDir Path root)
            throws Exception
    {
        assertThat(SCRIPT).as("the launcher at the repository root").exists();
        Files.copy(SCRIPT, root.resolve("pgsink"));
        // the root launcher runs the distribution's, which sizes the heap: one copy of that logic
        Path distributionScript = root.resolve("connector/standalone").resolve(DISTRIBUTION_SCRIPT);
        Files.createDirectories(distributionScript.getParent());
        Files.copy(DISTRIBUTION_SCRIPT, distributionScript);
        Path jar = root.resolve("connector/standalone/target/pgsink.jar");
        Files.createDirectories(jar.getParent());
        Files.createFile(jar);
        Path java = Files.writeString(root.resolve("java"), "#!/bin/sh\necho \"$@\"\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path big = Files.writeString(root.resolve("big.properties"), "target.url=jdbc:postgresql://dw/x\n  "
                + "buffer.max.bytes = 268435456\n");
        Path small = Files.writeString(root.resolve("small.properties"),
                "target.url=jdbc:postgresql://dw/x\nbuffer.max.bytes=16777216\n");
        Path unset = Files.writeString(root.resolve("unset.properties"), "target.url=jdbc:postgresql://dw/x\n");

        String runJar = " -jar " + jar + " run";
        // 4 x 256 MiB + 256 MiB
        assertThat(javaArguments(root, Map.of(), "run", "--config", big.toString()))
                .isEqualTo("-Xms1280m -Xmx1280m -Xmn640m" + runJar + " --config " + big);
        assertThat(javaArguments(root, Map.of(), "run", "-c", big.toString())).isEqualTo("-Xms1280m -Xmx1280m -Xmn640m"
                + runJar + " -c " + big);
        // the default 64 MiB buffer, and a small one, get the 512 MiB floor
        assertThat(javaArguments(root, Map.of(), "run", "--config=" + unset)).isEqualTo("-Xms512m -Xmx512m -Xmn256m"
                + runJar + " --config=" + unset);
        assertThat(javaArguments(root, Map.of(), "run", "--config", small.toString())).startsWith("-Xms512m -Xmx512m ");
        // the environment overrides the file, as for the service itself
        assertThat(javaArguments(root, Map.of("PGSINK_BUFFER_MAX_BYTES", "1073741824"), "run", "--config",
                big.toString())).startsWith("-Xms4352m -Xmx4352m -Xmn2176m ");
        // a young generation or an initial heap of the user's wins over the launcher's
        assertThat(javaArguments(root, Map.of("JAVA_OPTS", "-Xmn100m"), "run", "--config",
                big.toString())).startsWith("-Xmn100m -Xms1280m -Xmx1280m -jar ");
        assertThat(javaArguments(root, Map.of("JAVA_OPTS", "-Xms256m"), "run", "--config",
                big.toString())).startsWith("-Xms256m -Xmx1280m -Xmn640m -jar ");
        // a heap of the user's is left alone; other commands get the JVM's default
        assertThat(javaArguments(root, Map.of("JAVA_OPTS", "-Xmx2g"), "run", "--config",
                big.toString())).isEqualTo("-Xmx2g" + runJar + " --config " + big);
        assertThat(javaArguments(root, Map.of("JAVA_OPTS", "-XX:MaxRAMPercentage=50"), "run", "--config",
                big.toString())).doesNotContain("-Xmx");
        assertThat(javaArguments(root, Map.of(), "check", "--config", big.toString())).isEqualTo("-jar " + jar
                + " check --config " + big);
    }
}
