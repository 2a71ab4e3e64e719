package io.pgsink.connector.standalone.engine;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import static java.util.Objects.requireNonNull;

/**
 * The Debezium engine's offset storage ({@code offset.storage}), backed by the target's offsets
 * table: it answers the engine's reads with the positions the sink committed with the data, and
 * ignores the engine's writes, because the sink already stored those positions in the same
 * transaction as the data they belong to (and a write from the engine could only repeat them).
 *
 * <p>The engine creates this class by name, so it finds the positions through a registry keyed by
 * engine name ({@code name}, which the service sets to {@code sink.name}): the service
 * {@linkplain #register registers} a supplier of the sink's committed positions before it starts
 * the engine and removes it when the engine is gone.
 *
 * <p>Thread-safe.
 */
public final class TargetOffsetBackingStore
        implements OffsetBackingStore
{
    private static final Logger log = LoggerFactory.getLogger(TargetOffsetBackingStore.class);
    private static final Map<String, Supplier<Map<String, SourcePosition>>> REGISTRY = new ConcurrentHashMap<>();

    /**
     * Makes {@code positions} what engines named {@code engineName} read.
     *
     * @return closing it removes the registration
     * @throws IllegalStateException when an engine of that name is already registered in this JVM
     */
    public static AutoCloseable register(String engineName, Supplier<Map<String, SourcePosition>> positions)
    {
        requireNonNull(engineName, "engineName is null");
        requireNonNull(positions, "positions is null");
        if (REGISTRY.putIfAbsent(engineName, positions) != null) {
            throw new IllegalStateException("A sink named '" + engineName + "' is already running in this JVM");
        }
        return () -> REGISTRY.remove(engineName, positions);
    }

    @Override
    public void configure(WorkerConfig config) {}

    @Override
    public void start() {}

    @Override
    public void stop() {}

    @Override
    public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys)
    {
        Map<ByteBuffer, ByteBuffer> result = new HashMap<>();
        for (ByteBuffer key : keys) {
            OffsetJson.EngineKey engineKey = OffsetJson.readKey(key);
            if (engineKey == null) {
                continue;
            }
            SourcePosition position = positions(engineKey.engineName()).get(engineKey.partition());
            if (position != null) {
                log.debug("{} - read position of partition {}: {}", engineKey.engineName(), engineKey.partition(),
                        position.offset());
                result.put(key, ByteBuffer.wrap(position.offset().getBytes(StandardCharsets.UTF_8)));
            }
        }
        return CompletableFuture.completedFuture(result);
    }

    @Override
    public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback)
    {
        // already stored by the sink, in the transaction that applied the data
        if (callback != null) {
            callback.onCompletion(null, null);
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName)
    {
        Set<Map<String, Object>> partitions = new HashSet<>();
        for (String partition : positions(connectorName).keySet()) {
            partitions.add(OffsetJson.readMap(partition));
        }
        return partitions;
    }

    private static Map<String, SourcePosition> positions(String engineName)
    {
        Supplier<Map<String, SourcePosition>> supplier = REGISTRY.get(engineName);
        if (supplier == null) {
            throw new IllegalStateException("No pgsink sink named '" + engineName + "' is registered: "
                    + TargetOffsetBackingStore.class.getName()
                    + " serves only engines started by the pgsink service");
        }
        return supplier.get();
    }
}
