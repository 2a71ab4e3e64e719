package io.pgsink.connector.standalone.service;

import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import io.pgsink.connector.standalone.engine.SinkChangeConsumer;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.error.SinkException;
import org.apache.kafka.connect.source.SourceRecord;
import org.jetbrains.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static java.util.Objects.requireNonNull;

/**
 * One Debezium engine run at a time, for {@link StandaloneService}: builds the engine over a
 * {@link SinkChangeConsumer}, runs it on the service's thread until it stops, and stops it from
 * another thread ({@link #stop()}, from {@code close}), waiting out an engine whose tasks are
 * still starting, which refuses to close.
 */
final class EngineRunner
{
    // the service's category, which users' log settings name
    private static final Logger log = LoggerFactory.getLogger(StandaloneService.class);

    private final String name;
    private final AtomicReference<DebeziumEngine<RecordChangeEvent<SourceRecord>>> engine = new AtomicReference<>();
    private final AtomicReference<SinkChangeConsumer> consumer = new AtomicReference<>();

    EngineRunner(String name)
    {
        this.name = requireNonNull(name, "name is null");
    }

    /**
     * Runs an engine over {@code properties} into {@code changeConsumer} until it stops, calling
     * {@code streamingStarted} when it polls; why it stopped, null when it stopped without an error
     * or before it ran because {@code stopRequested}.
     */
    @Nullable
    Throwable run(Properties properties, SinkChangeConsumer changeConsumer, Runnable streamingStarted,
            BooleanSupplier stopRequested)
    {
        AtomicReference<Throwable> error = new AtomicReference<>();
        try {
            DebeziumEngine<RecordChangeEvent<SourceRecord>> created =
                    DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
                    .using(properties)
                    .notifying(changeConsumer)
                    .using((success, message, failure) -> {
                        if (!success) {
                            error.set(failure != null ? failure : new SinkException(ErrorCode.TRANSIENT, message));
                        }
                    })
                    .using(new DebeziumEngine.ConnectorCallback()
                    {
                        @Override
                        public void pollingStarted()
                        {
                            streamingStarted.run();
                        }
                    })
                    .build();
            consumer.set(changeConsumer);
            engine.set(created);
            if (stopRequested.getAsBoolean()) {
                return null;
            }
            created.run();
        }
        catch (Exception e) {
            error.compareAndSet(null, e);
        }
        finally {
            engine.set(null);
            consumer.set(null);
        }
        return error.get();
    }

    /** The source offset of the last batch the running engine applied, for progress logs; "" when none runs. */
    String lastPosition()
    {
        SinkChangeConsumer current = consumer.get();
        return current == null ? "" : current.lastPosition();
    }

    /** Stops the consumer's flush retries and the running engine, if any; from any thread. */
    void stop()
    {
        SinkChangeConsumer current = consumer.get();
        if (current != null) {
            current.stop();
        }
        for (int attempt = 0; attempt < 600; attempt++) {
            DebeziumEngine<RecordChangeEvent<SourceRecord>> running = engine.get();
            if (running == null) {
                return;
            }
            try {
                running.close();
                return;
            }
            catch (IllegalStateException e) {
                if (!e.getMessage().contains("tasks are starting")) {
                    // already stopping or stopped
                    return;
                }
            }
            catch (IOException e) {
                log.warn("{} - stopping the Debezium engine failed", name, e);
                return;
            }
            try {
                Thread.sleep(100);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
