package io.pgsink.connector.standalone.service;

import io.pgsink.connector.standalone.cli.TestingCommand;
import io.pgsink.connector.standalone.monitoring.ServiceState;
import io.pgsink.merge.state.WriterFencedException;
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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A second service started by mistake with the same {@code sink.name} (its own JVM, from the
 * runnable jar): it claims the writer generation, so the first one stops at its next flush with a
 * clear error and applies nothing more; the second one takes the replication slot over once the
 * first let it go, and streams.
 */
class SecondWriterIT
{
    private static final Duration WAIT = Duration.ofSeconds(180);

    @RegisterExtension
    final TestingPipeline pipeline = TestingPipeline.create("writers");
    private final TestingDatabase source = pipeline.source();
    private final TestingDatabase target = pipeline.target();

    @BeforeEach
    void createTables()
            throws Exception
    {
        pipeline.executeInBoth("CREATE TABLE public.items (id int PRIMARY KEY, note text)");
        source.execute("INSERT INTO public.items VALUES (1, 'one')");
    }

    @Test
    void theServiceStartedLastWritesAndTheOlderStops(@TempDir Path directory)
            throws Exception
    {
        Map<String, String> properties = pipeline.properties("public.items");
        properties.put("retry.backoff.max.ms", "1000");
        RunningService older = RunningService.start(properties);
        try {
            RunningService.await("the first service's snapshot", WAIT, () -> {
                older.assertRunning();
                assertThat(target.query("SELECT count(*) FROM public.items")).containsExactly(List.of("1"));
            });
            Path log = directory.resolve("newer.log");
            Process newer = TestingCommand.startProcess(TestingCommand.configFile(directory.resolve("pgsink.properties"), properties), log, "-Xmx256m");
            try {
                RunningService.await("the second service's claim", WAIT, () -> assertThat(target.query(
                        "SELECT source_offset FROM public.pgsink_offsets WHERE sink_name = '" + properties.get("sink.name") + " (writer generation)'")).containsExactly(List.of("2")));
                source.execute("INSERT INTO public.items VALUES (2, 'two')");
                Throwable failure = older.awaitFailure(WAIT);
                assertThat(failure).isInstanceOf(WriterFencedException.class)
                        .hasMessageStartingWith("Another writer with sink.name " + properties.get("sink.name") + " took over since this one claimed it (generation 1");
                assertThat(older.service().state()).isEqualTo(ServiceState.State.FAILED);
                RunningService.await("the second service streaming the change", WAIT, () -> {
                    assertThat(newer.isAlive()).as("the second service runs").isTrue();
                    assertThat(target.query("SELECT count(*) FROM public.items")).containsExactly(List.of("2"));
                });
            }
            finally {
                newer.destroy();
                if (!newer.waitFor(60, TimeUnit.SECONDS)) {
                    newer.destroyForcibly();
                }
            }
            assertThat(Files.readString(log)).contains("claimed writer generation 2");
        }
        finally {
            older.service().close();
        }
    }
}
