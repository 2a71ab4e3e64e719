package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Memory under a burst: one source transaction updates every row of a wide table ({@value #DEFAULT_ROWS}
 * rows of ~0.5 KB in CI; {@code -Dpgsink.burst.rows=5000000} for the 5M version), while the service
 * runs as its own JVM with {@code buffer.max.bytes=16MiB} and a heap far too small to hold the burst
 * ({@code -Xmx192m}; buffering the whole burst would take more than that: about 0.7 KB of heap per
 * buffered row, plus Debezium's records; {@code -XX:+ExitOnOutOfMemoryError} makes running out fail
 * the test). The burst must
 * be applied correctly (md5 of every row) and the live heap, read from the JVM's GC log after every
 * full collection (serial GC: what survives one is live), must stay within {@code 3 x buffer.max.bytes} (sink buffer, Debezium's queue bounded by
 * {@code max.queue.size.in.bytes}, the batch in hand) plus {@value #BASELINE_MIB} MiB for the
 * service itself (Debezium, Kafka Connect runtime, pgjdbc, JIT).
 */
class BurstMemoryIT
{
    private static final int DEFAULT_ROWS = 300_000;
    private static final long BUFFER_BYTES = 16L << 20;
    private static final long BASELINE_MIB = 64;
    /** A full collection of the serial GC: what is left after it is the live heap. */
    private static final Pattern FULL_GC = Pattern.compile("Pause Full .*?(\\d+)M->(\\d+)M\\((\\d+)M\\)");
    private static final String CHECKSUM = "SELECT count(*), sum(n), md5(string_agg(md5(t::text), '' ORDER BY id)) FROM public.burst t";

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("burst");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @Test
    void heapStaysBoundedWhileABulkUpdateIsApplied(@TempDir Path directory)
            throws Exception
    {
        int rows = Integer.getInteger("pgsink.burst.rows", DEFAULT_ROWS);
        String table = "CREATE TABLE public.burst (id int PRIMARY KEY, n int NOT NULL, payload text NOT NULL)";
        // the same rows on both sides: the service starts without a snapshot, and only the burst flows
        String seed = "INSERT INTO public.burst SELECT g, 0, repeat(md5(g::text), 16) FROM generate_series(1, " + rows + ") g";
        source.execute(table, seed);
        target.execute(table, seed);
        String sinkName = pipeline.sinkName();
        Path config = writeConfig(directory);
        Path log = directory.resolve("pgsink.log");
        Path gcLog = directory.resolve("gc.log");
        Path jar = Path.of(System.getProperty("pgsink.jar", "target/pgsink.jar"));
        assertThat(jar).as("the runnable jar (mvn package builds it)").exists();
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx192m", "-XX:+UseSerialGC", "-Xlog:gc:file=" + gcLog,
                "-XX:+ExitOnOutOfMemoryError", "-jar", jar.toString(), "run", "--config", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(name -> name.startsWith(StandaloneConfig.ENVIRONMENT_PREFIX));
        Process process = builder.start();
        long started;
        try {
            RunningService.await("the replication slot to be active", Duration.ofSeconds(90), () -> {
                assertThat(process.isAlive()).as("pgsink runs; log:\n%s", Files.readString(log)).isTrue();
                assertThat(source.query("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + sinkName + "' AND active")).containsExactly(List.of("1"));
                assertThat(Files.readString(log)).contains("streaming changes from");
            });
            started = System.nanoTime();
            source.execute("UPDATE public.burst SET n = n + 1");
            List<List<String>> expected = source.query(CHECKSUM);
            RunningService.await("the burst to be applied", Duration.ofMinutes(Math.max(5, rows / 50_000)), () -> {
                assertThat(process.isAlive()).as("pgsink runs; log:\n%s", Files.readString(log)).isTrue();
                assertThat(target.query("SELECT sum(n) FROM public.burst")).containsExactly(List.of(Integer.toString(rows)));
            });
            assertThat(target.query(CHECKSUM)).isEqualTo(expected);
        }
        finally {
            process.destroy();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
        long peakAfterGc = 0;
        int collections = 0;
        Matcher matcher = FULL_GC.matcher(Files.readString(gcLog));
        while (matcher.find()) {
            peakAfterGc = Math.max(peakAfterGc, Long.parseLong(matcher.group(2)));
            collections++;
        }
        long bound = 3 * (BUFFER_BYTES >> 20) + BASELINE_MIB;
        System.out.println("BurstMemoryIT: " + rows + " updated rows applied in ~" + seconds + " s; peak live heap after GC " + peakAfterGc
                + " MiB over " + collections + " full collections (bound " + bound + " MiB = 3 x buffer.max.bytes " + (BUFFER_BYTES >> 20) + " MiB + " + BASELINE_MIB + " MiB)");
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
        assertThat(collections).as("full collections in the GC log: the heap was under pressure").isPositive();
        assertThat(peakAfterGc).as("peak live heap in MiB").isLessThanOrEqualTo(bound);
    }

    private Path writeConfig(Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public.burst");
        // flushes by size (buffer.max.bytes) as much as by time: the burst fills the buffer
        properties.remove("flush.interval.ms");
        properties.put("source.snapshot.mode", "no_data");
        properties.put("buffer.max.bytes", Long.toString(BUFFER_BYTES));
        properties.put("progress.interval.ms", "5000");
        Path file = TestingCommand.configFile(directory.resolve("pgsink.properties"), properties);
        return file;
    }
}
