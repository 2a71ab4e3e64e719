package io.pgsink.connector.standalone;

import io.pgsink.core.SinkException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code pgsink run --config FILE}: streams until stopped (SIGTERM or Ctrl-C stop it cleanly; SIGKILL
 * is safe too). Exits 2 when the configuration is invalid, 1 when streaming stops with an error.
 */
@Command(name = "run", description = "Stream changes from the source PostgreSQL into the target until stopped.")
final class RunCommand
        implements Callable<Integer>
{
    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE", description = "Properties file: source.* (Debezium), target.*, sink.* and the other pgsink keys; PGSINK_* environment variables override it.")
    private Path config;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
            throws InterruptedException
    {
        StandaloneConfig parsed = StandaloneConfig.load(config, System.getenv());
        StandaloneService service = new StandaloneService(parsed);
        Thread hook = new Thread(service::close, "pgsink-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            service.run();
        }
        catch (SinkException e) {
            // reported once, here; the service does not log what it throws
            spec.commandLine().getErr().println("pgsink: " + e.getMessage());
            spec.commandLine().getErr().flush();
            return PgsinkCommand.EXIT_FAILED;
        }
        return PgsinkCommand.EXIT_OK;
    }
}
