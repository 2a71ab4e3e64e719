package io.pgsink.bench.support;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.OptionalLong;

/**
 * CPU seconds spent on each side while a method runs.
 *
 * <ul>
 * <li><b>client</b>: this JVM's process CPU time ({@code OperatingSystemMXBean.getProcessCpuTime}),
 *     all threads, JIT and GC included.</li>
 * <li><b>server</b>: the whole PostgreSQL process tree, read from {@code /proc}: the postmaster's
 *     own and reaped children's time ({@code utime + stime + cutime + cstime}) plus every live child's
 *     {@code utime + stime}. So backends that exit during the run are counted, and so are the WAL
 *     writer, checkpointer and autovacuum work the method causes; so is any other client's work on
 *     the same server at the same time, which is why the benchmark should run on an otherwise idle
 *     server. Only available when the server runs on this machine (its postmaster is found from
 *     {@code pg_backend_pid()}) and is not a Greenplum or Cloudberry cluster (whose segments run
 *     postmasters of their own); otherwise reported as unknown.</li>
 * </ul>
 */
public final class CpuTimes
{
    public record Sample(long clientNanos, long serverTicks) {}

    private static final long TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux architecture in use

    private final OptionalLong postmaster;

    private CpuTimes(OptionalLong postmaster)
    {
        this.postmaster = postmaster;
    }

    public static CpuTimes of(BenchmarkDatabase database)
            throws SQLException
    {
        try (Connection connection = database.connect(false); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT pg_backend_pid(), version()")) {
            result.next();
            long backend = result.getLong(1);
            if (distributed(result.getString(2))) {
                return new CpuTimes(OptionalLong.empty());
            }
            long[] stat = stat(backend);
            return new CpuTimes(stat == null ? OptionalLong.empty() : OptionalLong.of(stat[0]));
        }
    }

    /**
     * Greenplum and Cloudberry run a postmaster per segment besides the coordinator's, whose process
     * tree is all {@code pg_backend_pid()} leads to: counting it alone would understate the server's
     * work, so the server's CPU is reported as unknown there.
     */
    static boolean distributed(String version)
    {
        String lower = version.toLowerCase(java.util.Locale.ROOT);
        return lower.contains("greenplum") || lower.contains("cloudberry");
    }

    boolean serverKnown()
    {
        return postmaster.isPresent();
    }

    public Sample sample()
    {
        long client = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        return new Sample(client, postmaster.isPresent() ? serverTicks(postmaster.getAsLong()) : -1);
    }

    public static double clientSeconds(Sample start, Sample end)
    {
        return (end.clientNanos() - start.clientNanos()) / 1e9;
    }

    public static double serverSeconds(Sample start, Sample end)
    {
        if (start.serverTicks() < 0 || end.serverTicks() < 0) {
            return Double.NaN;
        }
        return (end.serverTicks() - start.serverTicks()) / (double) TICKS_PER_SECOND;
    }

    /**
     * A backend that has exited but is not reaped yet (a zombie) shows no CPU time, and its time is
     * not in the postmaster's children's time yet: wait (up to a second) until there is none, e.g.
     * right after the method closed its connections.
     */
    private static long serverTicks(long postmaster)
    {
        for (int attempt = 0; ; attempt++) {
            long ticks = 0;
            boolean zombies = false;
            try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), path -> path.getFileName()
                    .toString().chars().allMatch(Character::isDigit))) {
                for (Path process : processes) {
                    long[] stat = stat(Long.parseLong(process.getFileName().toString()));
                    if (stat != null && stat[0] == postmaster) {
                        ticks += stat[1] + stat[2];
                        zombies |= stat[5] != 0;
                    }
                }
            }
            catch (IOException e) {
                return -1;
            }
            // read last: a child that exits while the children are read is then counted twice rather than not at all
            long[] own = stat(postmaster);
            if (own == null) {
                return -1;
            }
            if (!zombies || attempt == 100) {
                return ticks + own[1] + own[2] + own[3] + own[4];
            }
            try {
                Thread.sleep(10);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
            }
        }
    }

    /**
     * {ppid, utime, stime, cutime, cstime, 1 if a zombie} of a process, or null when it is gone or /proc is not there.
     */
    private static long[] stat(long pid)
    {
        String line;
        try {
            line = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        }
        catch (IOException | RuntimeException e) {
            return null;
        }
        // the command name is in parentheses and may hold spaces: fields are counted after the last ')'
        String[] fields = line.substring(line.lastIndexOf(')') + 2).trim().split(" ");
        boolean zombie = fields[0].equals("Z") || fields[0].equals("X");
        return new long[] {Long.parseLong(fields[1]), Long.parseLong(fields[11]), Long.parseLong(fields[12]),
                Long.parseLong(fields[13]), Long.parseLong(fields[14]), zombie ? 1 : 0};
    }
}
