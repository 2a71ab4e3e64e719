package io.pgsink.connector.standalone;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL with {@code wal_level=logical} in a temporary directory, for the quickstart on a
 * machine without one. The server binaries come from the {@code io.zonky.test.postgres} Maven
 * artifacts on the classpath (an {@code .txz} of a relocatable PostgreSQL build per system).
 *
 * <p>PostgreSQL refuses to run as root ({@code initdb: cannot be run as root}), and containers and
 * CI machines often run everything as root. Then the binaries run as the unprivileged user
 * {@code nobody} through util-linux's {@code setpriv} (or {@code runuser}), the data directory
 * owned by that user; the extracted binaries are readable by everyone. The server listens on
 * 127.0.0.1 only, on a free port, with trust authentication, and is stopped and deleted by
 * {@link #close()}.
 */
final class ThrowawayPostgres
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(ThrowawayPostgres.class);
    private static final String UNPRIVILEGED_USER = "nobody";
    private static final Set<PosixFilePermission> WORLD_READABLE_DIRECTORY = PosixFilePermissions.fromString("rwxr-xr-x");

    private final Path directory;
    private final List<String> runAs;
    private final int port;
    private boolean running;

    private ThrowawayPostgres(Path directory, List<String> runAs, int port)
    {
        this.directory = directory;
        this.runAs = runAs;
        this.port = port;
    }

    static ThrowawayPostgres start()
            throws IOException, InterruptedException
    {
        Path directory = Files.createTempDirectory("pgsink-postgres-");
        ThrowawayPostgres server = null;
        try {
            Files.setPosixFilePermissions(directory, WORLD_READABLE_DIRECTORY);
            Path installation = directory.resolve("pg");
            extract(installation);
            Path data = directory.resolve("data");
            Files.createDirectory(data, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path logFile = Files.createFile(directory.resolve("postgres.log"));
            List<String> runAs = List.of();
            if (isRoot()) {
                UserPrincipal user = directory.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName(UNPRIVILEGED_USER);
                Files.setOwner(data, user);
                Files.setOwner(logFile, user);
                runAs = unprivilegedPrefix();
            }
            server = new ThrowawayPostgres(directory, runAs, freePort());
            server.initialize();
            server.startServer();
            return server;
        }
        catch (IOException | InterruptedException | RuntimeException e) {
            if (server != null) {
                server.close();
            }
            else {
                deleteRecursively(directory);
            }
            throw e;
        }
    }

    int port()
    {
        return port;
    }

    String jdbcUrl(String database)
    {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    private void initialize()
            throws IOException, InterruptedException
    {
        run(List.of(bin("initdb"), "-D", directory.resolve("data").toString(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"), 120);
    }

    private void startServer()
            throws IOException, InterruptedException
    {
        String options = "-p " + port + " -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c wal_level=logical"
                + " -c max_replication_slots=10 -c max_wal_senders=10 -c fsync=off -c synchronous_commit=off";
        run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-l", directory.resolve("postgres.log").toString(), "-w", "-t", "60", "-o", options, "start"), 90);
        running = true;
        log.info("started a throwaway PostgreSQL on 127.0.0.1:{} in {}", port, directory);
    }

    /**
     * Stops the server ({@code -m fast}: open connections are cut) and starts it again on the same
     * port, as an operator's restart of the database would; for the fault-injection tests.
     */
    void restart()
            throws IOException, InterruptedException
    {
        run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-m", "fast", "-w", "-t", "60", "stop"), 90);
        running = false;
        startServer();
    }

    @Override
    public void close()
    {
        try {
            if (running) {
                run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-m", "fast", "-w", "-t", "60", "stop"), 90);
                running = false;
            }
        }
        catch (IOException | InterruptedException e) {
            log.warn("stopping the throwaway PostgreSQL in {} failed", directory, e);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            deleteRecursively(directory);
        }
        catch (IOException e) {
            log.warn("removing {} failed", directory, e);
        }
    }

    private String bin(String program)
    {
        return directory.resolve("pg").resolve("bin").resolve(program).toString();
    }

    private void run(List<String> command, long timeoutSeconds)
            throws IOException, InterruptedException
    {
        List<String> full = new ArrayList<>(runAs);
        full.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(full).directory(directory.toFile()).redirectErrorStream(true);
        builder.environment().put("LC_ALL", "C");
        Process process = builder.start();
        byte[] output;
        try (InputStream in = process.getInputStream()) {
            output = in.readAllBytes();
        }
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(String.join(" ", command) + " did not finish within " + timeoutSeconds + " s");
        }
        if (process.exitValue() != 0) {
            String serverLog = "";
            Path logFile = directory.resolve("postgres.log");
            if (Files.isReadable(logFile)) {
                serverLog = "\nserver log:\n" + Files.readString(logFile);
            }
            throw new IOException(String.join(" ", full) + " failed with exit code " + process.exitValue() + ":\n" + new String(output, StandardCharsets.UTF_8) + serverLog);
        }
    }

    private static void extract(Path installation)
            throws IOException
    {
        String archive = archiveName();
        InputStream resource = ThrowawayPostgres.class.getResourceAsStream("/" + archive);
        if (resource == null) {
            throw new IOException("No PostgreSQL binaries for this system (" + archive + " is not on the classpath): start a PostgreSQL with wal_level=logical on localhost:5432 instead");
        }
        Files.createDirectories(installation);
        Files.setPosixFilePermissions(installation, WORLD_READABLE_DIRECTORY);
        try (TarArchiveInputStream tar = new TarArchiveInputStream(new XZCompressorInputStream(new BufferedInputStream(resource)))) {
            TarArchiveEntry entry;
            while ((entry = tar.getNextEntry()) != null) {
                Path target = installation.resolve(entry.getName()).normalize();
                if (!target.startsWith(installation)) {
                    throw new IOException("Archive entry " + entry.getName() + " points outside " + installation);
                }
                if (entry.isDirectory()) {
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, WORLD_READABLE_DIRECTORY);
                }
                else if (entry.isSymbolicLink()) {
                    Files.createDirectories(target.getParent());
                    Files.createSymbolicLink(target, Path.of(entry.getLinkName()));
                }
                else {
                    Files.createDirectories(target.getParent());
                    Files.copy(tar, target, StandardCopyOption.REPLACE_EXISTING);
                    boolean executable = (entry.getMode() & 0100) != 0;
                    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString(executable ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
        }
    }

    private static String archiveName()
    {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String system = os.contains("mac") || os.contains("darwin") ? "darwin" : os.contains("linux") ? "linux" : os.replace(' ', '_');
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String hardware = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64" : arch.equals("aarch64") || arch.equals("arm64") ? "arm_64" : arch;
        return "postgres-" + system + "-" + hardware + ".txz";
    }

    private static boolean isRoot()
    {
        return "root".equals(System.getProperty("user.name"));
    }

    /** How root starts a program as {@code nobody}: setpriv, else runuser (both util-linux). */
    private static List<String> unprivilegedPrefix()
            throws IOException
    {
        for (String directory : List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin")) {
            if (Files.isExecutable(Path.of(directory, "setpriv"))) {
                return List.of(directory + "/setpriv", "--reuid=" + UNPRIVILEGED_USER, "--regid=" + primaryGroup(UNPRIVILEGED_USER), "--clear-groups", "--");
            }
        }
        for (String directory : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(directory, "runuser"))) {
                return List.of(directory + "/runuser", "-u", UNPRIVILEGED_USER, "--");
            }
        }
        throw new IOException("PostgreSQL cannot run as root, and neither setpriv nor runuser is available to run it as " + UNPRIVILEGED_USER
                + ": run the quickstart as another user, or start a PostgreSQL with wal_level=logical on localhost:5432");
    }

    /** The user's primary group id, from /etc/passwd (nogroup on Debian, nobody elsewhere, 65534 on both). */
    private static String primaryGroup(String user)
            throws IOException
    {
        for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
            String[] fields = line.split(":");
            if (fields.length > 3 && fields[0].equals(user)) {
                return fields[3];
            }
        }
        throw new IOException("User " + user + " is not in /etc/passwd, so PostgreSQL has no unprivileged user to run as: run the quickstart as another user, "
                + "or start a PostgreSQL with wal_level=logical on localhost:5432");
    }

    private static int freePort()
            throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void deleteRecursively(Path directory)
            throws IOException
    {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
