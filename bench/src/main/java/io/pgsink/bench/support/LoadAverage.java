package io.pgsink.bench.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The load of the machine a benchmark ran on, printed with every report so that a noisy run shows. */
public final class LoadAverage
{
    private LoadAverage() {}

    /** The 1, 5 and 15 minute load averages of this machine, or "unknown". */
    public static String read()
    {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + ", " + fields[1] + ", " + fields[2];
        }
        catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
