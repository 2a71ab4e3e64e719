package io.pgsink.connector.standalone.engine;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.pgsink.core.change.SourcePosition;
import org.jetbrains.annotations.Nullable;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
public final class OffsetJson
{
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    private static final TypeReference<List<Object>> LIST = new TypeReference<>() {};
    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

    private OffsetJson() {}

    static String write(@Nullable Map<String, ?> map)
    {
        if (map == null || map.isEmpty()) {
            return "{}";
        }
        String flat = writeFlat(map);
        if (flat != null) {
            return flat;
        }
        try {
            return MAPPER.writeValueAsString(map == null ? Map.of() : map);
        }
        catch (JsonProcessingException e) {
            throw new IllegalArgumentException("Cannot write source position as JSON: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * The JSON Jackson writes for a map of strings, integers, booleans and nulls whose keys and
     * strings need no escaping, written without Jackson: every change event's offset is such a map
     * (Debezium's PostgreSQL offset holds LSNs, a transaction id, a timestamp and a message type),
     * and a sorted copy and Jackson's writer per event cost about as much CPU as the rest of the
     * consumer's work on it. Null for any other map, which Jackson then writes.
     */
    @Nullable
    static String writeFlat(Map<String, ?> map)
    {
        String[] keys = new String[map.size()];
        int count = 0;
        for (Object key : map.keySet()) {
            if (!(key instanceof String text) || !plain(text) || count == keys.length) {
                return null;
            }
            keys[count++] = text;
        }
        if (count != keys.length) {
            return null;
        }
        Arrays.sort(keys);
        StringBuilder json = new StringBuilder(32 * keys.length);
        json.append('{');
        for (int i = 0; i < keys.length; i++) {
            if (i > 0) {
                json.append(',');
            }
            json.append('"').append(keys[i]).append("\":");
            Object value = map.get(keys[i]);
            if (value == null || value instanceof Long || value instanceof Integer || value instanceof Boolean
                    || value instanceof Short || value instanceof Byte) {
                json.append(value);
            }
            else if (value instanceof String text && plain(text)) {
                json.append('"').append(text).append('"');
            }
            else {
                return null;
            }
        }
        return json.append('}').toString();
    }

    /** Whether JSON writes {@code text} as it is: no quote, backslash or control character. */
    private static boolean plain(String text)
    {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }

    static SourcePosition position(@Nullable Map<String, ?> partition, @Nullable Map<String, ?> offset)
    {
        return new SourcePosition(write(partition), write(offset));
    }

    public static Map<String, Object> readMap(String json)
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
            if (parts.size() != 2 || !(parts.get(0) instanceof String name) || !(parts.get(1) instanceof Map<?,
                    ?> partition)) {
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
