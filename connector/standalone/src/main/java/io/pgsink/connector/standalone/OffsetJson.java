package io.pgsink.connector.standalone;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.pgsink.core.SourcePosition;
import org.jetbrains.annotations.Nullable;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Debezium source partitions and offsets (maps of strings, numbers and booleans) as the JSON text
 * stored in the target's offsets table. Map keys are sorted, so one partition always has the same
 * text: it is the key of the offsets row. The engine reads offsets back with Kafka's schemaless
 * {@code JsonConverter}, which accepts exactly this JSON.
 *
 * <p>Thread-safe.
 */
final class OffsetJson
{
    private static final ObjectMapper MAPPER = new ObjectMapper().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    private static final TypeReference<List<Object>> LIST = new TypeReference<>() {};
    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

    private OffsetJson() {}

    static String write(@Nullable Map<String, ?> map)
    {
        try {
            return MAPPER.writeValueAsString(map == null ? Map.of() : map);
        }
        catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Cannot write source position as JSON: " + e.getOriginalMessage(), e);
        }
    }

    static SourcePosition position(@Nullable Map<String, ?> partition, @Nullable Map<String, ?> offset)
    {
        return new SourcePosition(write(partition), write(offset));
    }

    static Map<String, Object> readMap(String json)
    {
        try {
            return MAPPER.readValue(json, MAP);
        }
        catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Not a JSON object: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Reads a key of Kafka Connect's offset storage, {@code ["engine name", {partition}]}.
     *
     * @return the engine name and the partition as canonical JSON, or null when the key has another shape
     */
    static @Nullable EngineKey readKey(ByteBuffer key)
    {
        String json = StandardCharsets.UTF_8.decode(key.duplicate()).toString();
        try {
            List<Object> parts = MAPPER.readValue(json, LIST);
            if (parts.size() != 2 || !(parts.get(0) instanceof String name) || !(parts.get(1) instanceof Map<?, ?> partition)) {
                return null;
            }
            return new EngineKey(name, MAPPER.writeValueAsString(partition));
        }
        catch (JsonProcessingException e) {
            return null;
        }
    }

    record EngineKey(String engineName, String partition) {}
}
