package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The distribution archive {@code target/pgsink-<version>.tar.gz} that {@code package} builds
 * (src/assembly/distribution.xml): what it holds, and that its launcher runs the service once
 * unpacked, as a user would run it.
 */
class DistributionIT
{
    private static final Path REPOSITORY = Path.of("../..").toAbsolutePath().normalize();
    private static final String VERSION = System.getProperty("pgsink.version", "0.1.0-SNAPSHOT");
    private static final String BASE = "pgsink-" + VERSION + "/";

    @TempDir
    static Path unpacked;

    /** Entry name (without the base directory) to its Unix mode. */
    private static Map<String, Integer> entries;

    @BeforeAll
    static void unpack()
            throws IOException
    {
        Path archive = Path.of(System.getProperty("pgsink.distribution", "target/pgsink-" + VERSION + ".tar.gz"));
        assertThat(archive).as("the distribution archive (mvn package builds it)").isRegularFile();
        entries = new TreeMap<>();
        try (InputStream file = new BufferedInputStream(Files.newInputStream(archive));
                TarArchiveInputStream tar = new TarArchiveInputStream(new GzipCompressorInputStream(file))) {
            for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
                assertThat(entry.getName()).as("every entry lies under the base directory").startsWith(BASE);
                Path target = unpacked.resolve(entry.getName()).normalize();
                assertThat(target.startsWith(unpacked)).as("%s stays in its directory", entry.getName()).isTrue();
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                    continue;
                }
                entries.put(entry.getName().substring(BASE.length()), entry.getMode() & 0777);
                Files.createDirectories(target.getParent());
                Files.copy(tar, target);
                if ((entry.getMode() & 0100) != 0) {
                    Set<PosixFilePermission> permissions = EnumSet.copyOf(Files.getPosixFilePermissions(target));
                    permissions.add(PosixFilePermission.OWNER_EXECUTE);
                    Files.setPosixFilePermissions(target, permissions);
                }
            }
        }
    }

    @Test
    void holdsTheLauncherTheJarTheExampleConfigurationAndTheDocs()
            throws IOException
    {
        assertThat(entries).containsKeys("bin/pgsink", "lib/pgsink.jar", "config/pgsink.properties",
                "LICENSE", "NOTICE", "CHANGELOG.md", "README.md", "systemd/pgsink.service");
        assertThat(entries.get("bin/pgsink")).as("mode of bin/pgsink").isEqualTo(0755);
        assertThat(entries.keySet()).as("the docs, every page of docs/").containsAll(repositoryFiles("docs"));
        assertThat(entries.keySet()).as("nothing else")
                .allMatch(name -> name.startsWith("docs/") || name.startsWith("bin/") || name.startsWith("lib/")
                        || name.startsWith("config/") || name.startsWith("systemd/") || !name.contains("/"));
        assertThat(Files.readString(unpacked.resolve(BASE + "bin/pgsink"))).doesNotContain("\r");

        try (JarFile jar = new JarFile(unpacked.resolve(BASE + "lib/pgsink.jar").toFile())) {
            Attributes attributes = jar.getManifest().getMainAttributes();
            assertThat(attributes.getValue("Main-Class")).isEqualTo(PgsinkCommand.class.getName());
            assertThat(attributes.getValue("Implementation-Version")).isEqualTo(VERSION);
        }
    }

    @Test
    void theExampleConfigurationIsValid()
    {
        StandaloneConfig config = StandaloneConfig.load(unpacked.resolve(BASE + "config/pgsink.properties"), Map.of());
        assertThat(config.sink().targetUrl()).startsWith("jdbc:postgresql://");
        assertThat(config.httpPort()).isEqualTo(9464);
    }

    @Test
    void theLauncherRunsTheJarWithJavaOptsAndADefaultHeap()
            throws Exception
    {
        String jar = unpacked.resolve(BASE + "lib/pgsink.jar").toString();
        // JAVA names the runtime; echo shows the command line the launcher builds
        assertThat(launch(Map.of("JAVA", "echo"), "run", "--config", "x.properties").output().strip())
                .isEqualTo("-Xms512m -Xmx512m -Xmn256m -jar " + jar + " run --config x.properties");
        assertThat(launch(Map.of("JAVA", "echo", "JAVA_OPTS", "-Xmx256m -Dx=y"), "--help").output().strip())
                .isEqualTo("-Xmx256m -Dx=y -jar " + jar + " --help");
        assertThat(launch(Map.of("JAVA", "echo", "JAVA_OPTS", "-XX:MaxRAMPercentage=75"), "--help").output().strip())
                .isEqualTo("-XX:MaxRAMPercentage=75 -jar " + jar + " --help");
        assertThat(launch(Map.of("JAVA", "echo", "JAVA_OPTS", "-Dy=z"), "--help").output().strip())
                .isEqualTo("-Dy=z -jar " + jar + " --help");
    }

    @Test
    void helpAndVersionRunTheService()
            throws Exception
    {
        Result help = launch(Map.of(), "--help");
        assertThat(help.exitCode()).as("exit code of bin/pgsink --help; output:\n%s", help.output()).isZero();
        assertThat(help.output()).contains("Usage: pgsink").contains("run").contains("check").contains("quickstart");

        Result version = launch(Map.of(), "--version");
        assertThat(version.exitCode()).as("exit code of bin/pgsink --version; output:\n%s", version.output()).isZero();
        assertThat(version.output().strip()).isEqualTo("pgsink " + VERSION);
    }

    @Test
    void quickstartPasses()
            throws Exception
    {
        Result quickstart = launch(Map.of(), "quickstart", "--duration", "5", "--rate", "50");
        assertThat(quickstart.exitCode()).as("exit code of bin/pgsink quickstart; output:\n%s", quickstart.output())
                .isZero();
        assertThat(quickstart.output()).containsPattern("(?m)^PASS: target equals source");
    }

    private static Result launch(Map<String, String> environment, String... args)
            throws Exception
    {
        String launcher = unpacked.resolve(BASE + "bin/pgsink").toString();
        List<String> command = Stream.concat(Stream.of(launcher), Stream.of(args)).toList();
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).directory(unpacked.toFile());
        builder.environment().keySet()
                .removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX) || name.equals("JAVA_OPTS"));
        // the JVM running this test: the runtime a user's JAVA_HOME would name
        Path java = Path.of(ProcessHandle.current().info().command().orElseThrow());
        builder.environment().put("JAVA_HOME", java.getParent().getParent().toString());
        builder.environment().remove("JAVA");
        builder.environment().putAll(environment);
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] output = process.getInputStream().readAllBytes();
        assertThat(process.waitFor(5, TimeUnit.MINUTES)).as("bin/pgsink %s ends", String.join(" ", args)).isTrue();
        return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
    }

    /** The regular files under {@code directory} of the repository, relative to the repository. */
    private static Set<String> repositoryFiles(String directory)
            throws IOException
    {
        try (Stream<Path> files = Files.walk(REPOSITORY.resolve(directory))) {
            return files.filter(Files::isRegularFile).map(file -> REPOSITORY.relativize(file).toString())
                    .collect(Collectors.toSet());
        }
    }

    private record Result(int exitCode, String output) {}
}
