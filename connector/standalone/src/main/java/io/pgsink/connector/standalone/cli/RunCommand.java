package io.pgsink.connector.standalone.cli;

import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.connector.standalone.logging.LogFormat;
import io.pgsink.connector.standalone.preflight.MetadataColumnConflicts;
import io.pgsink.connector.standalone.preflight.SourcePreflight;
import io.pgsink.connector.standalone.service.StandaloneService;
import io.pgsink.core.error.SinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;
import sun.misc.Signal;
import sun.misc.SignalHandler;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code pgsink run --config FILE}: streams until stopped. SIGTERM and SIGINT (Ctrl-C) stop it
 * cleanly and it exits 0; a second signal while it stops ends it at once (128 + the signal's
 * number, as a shell reports a killed process). SIGKILL is safe too. Exits 2 when the
 * configuration is invalid, 1 when streaming stops with an error.
 */
@Command(name = "run",
        mixinStandardHelpOptions = true,
        versionProvider = PgsinkCommand.Version.class,
        description = "Stream changes from the source PostgreSQL into the target until stopped "
                + "(SIGTERM or Ctrl-C: a clean stop, exit code 0).")
public final class RunCommand
        implements Callable<Integer>
{
    private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

    /** The signals that stop the service cleanly. */
    private static final List<String> STOP_SIGNALS = List.of("TERM", "INT");

    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE",
            description = "Properties file: source.* (Debezium), target.*, sink.* and the other pgsink keys; "
                    + "PGSINK_* environment variables override it.")
    private Path config;

    @CommandLine.Spec
    private CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call()
            throws InterruptedException
    {
        StandaloneConfig parsed = StandaloneConfig.load(config, System.getenv());
        // before anything is created: the slot, the offsets table, a target table
        MetadataColumnConflicts.check(parsed);
        new SourcePreflight(parsed).checkFailoverAtStart();
        StandaloneService service = new StandaloneService(parsed);
        PrintWriter err = spec.commandLine().getErr();
        // the JVM's own handlers exit 128 + the signal's number even after a clean stop: stop here instead
        // and let run() return; the hook covers the other ways the JVM ends (System.exit, SIGHUP)
        AtomicBoolean stopping = new AtomicBoolean();
        Map<Signal, SignalHandler> previous = new LinkedHashMap<>();
        for (String name : STOP_SIGNALS) {
            Signal signal = new Signal(name);
            handle(signal, () -> {
                if (stopping.compareAndSet(false, true)) {
                    service.close();
                    return;
                }
                err.println("pgsink: SIG" + name + " again while stopping: exiting at once");
                err.flush();
                Runtime.getRuntime().halt(128 + signal.getNumber());
            }).ifPresent(handler -> previous.put(signal, handler));
        }
        Thread hook = new Thread(service::close, "pgsink-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            service.run();
        }
        catch (SinkException e) {
            // reported once, here; the service does not log what it throws. A log collector reading the
            // JSON lines on standard output gets it as an ERROR event; people read the line on stderr
            if (LogFormat.json()) {
                LOG.error("{}", e.getMessage());
            }
            err.println("pgsink: " + e.getMessage());
            err.flush();
            return PgsinkCommand.EXIT_FAILED;
        }
        finally {
            // a run inside a longer-lived JVM (tests) leaves no handler or hook behind
            previous.forEach(Signal::handle);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (IllegalStateException e) {
                // the JVM is shutting down: the hook is what stopped the service
            }
        }
        return PgsinkCommand.EXIT_OK;
    }

    /**
     * Runs {@code stop} on a thread of its own when {@code signal} arrives; returns the handler it
     * replaced. Where the JVM keeps the signal (-Xrs, or the OS reserves it) its default stays.
     */
    private static Optional<SignalHandler> handle(Signal signal, Runnable stop)
    {
        try {
            SignalHandler handler = received -> new Thread(stop, "pgsink-SIG" + signal.getName()).start();
            return Optional.of(Signal.handle(signal, handler));
        }
        catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
