package io.pgsink.connector.standalone.engine;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TargetOffsetBackingStoreTest
{
    /** Serializes keys and values the way the Debezium engine does: Kafka's schemaless JsonConverter. */
    private static JsonConverter converter(boolean key)
    {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), key);
        return converter;
    }

    private static ByteBuffer engineKey(String engine, Map<String, Object> partition)
    {
        return ByteBuffer.wrap(converter(true).fromConnectData(engine, null, Arrays.asList(engine, partition)));
    }

    @Test
    @SuppressWarnings("try")
    void answersTheEngineWithThePositionsCommittedInTheTarget()
            throws Exception
    {
        Map<String, Object> offset = new LinkedHashMap<>();
        offset.put("txId", 771L);
        offset.put("lsn", 123456789L);
        offset.put("lsn_proc", 123456789L);
        offset.put("messageType", "UPDATE");
        SourcePosition committed = OffsetJson.position(Map.of("server", "db1"), offset);
        assertThat(committed.partition()).isEqualTo("{\"server\":\"db1\"}");
        // keys sorted: the same partition always has the same text
        assertThat(committed.offset()).isEqualTo("{\"lsn\":123456789,\"lsn_proc\":123456789,\"messageType\":\"UPDATE\",\"txId\":771}");

        TargetOffsetBackingStore store = new TargetOffsetBackingStore();
        try (AutoCloseable registration = TargetOffsetBackingStore.register("sink-a", () -> Map.of(committed.partition(), committed))) {
            ByteBuffer known = engineKey("sink-a", Map.of("server", "db1"));
            ByteBuffer unknown = engineKey("sink-a", Map.of("server", "db2"));
            Map<ByteBuffer, ByteBuffer> values = store.get(List.of(known, unknown)).get();
            assertThat(values).containsOnlyKeys(known);

            Object read = converter(false).toConnectData("sink-a", bytes(values.get(known))).value();
            assertThat(read).isEqualTo(Map.of("txId", 771L, "lsn", 123456789L, "lsn_proc", 123456789L, "messageType", "UPDATE"));

            assertThat(store.connectorPartitions("sink-a")).containsExactly(Map.of("server", "db1"));

            // the engine's own writes are acknowledged and dropped: the sink stored them with the data
            AtomicBoolean acknowledged = new AtomicBoolean();
            store.set(Map.of(known, ByteBuffer.wrap("{\"lsn\":1}".getBytes())), (error, result) -> acknowledged.set(error == null)).get();
            assertThat(acknowledged).isTrue();
            assertThat(converter(false).toConnectData("sink-a", bytes(store.get(List.of(known)).get().get(known))).value())
                    .isEqualTo(read);
        }
        assertThatThrownBy(() -> store.get(List.of(engineKey("sink-a", Map.of("server", "db1")))))
                .hasMessageContaining("No pgsink sink named 'sink-a' is registered");
    }

    @Test
    @SuppressWarnings("try")
    void oneRegistrationPerName()
            throws Exception
    {
        try (AutoCloseable registration = TargetOffsetBackingStore.register("sink-b", Map::of)) {
            assertThatThrownBy(() -> TargetOffsetBackingStore.register("sink-b", Map::of))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("'sink-b' is already running");
        }
        TargetOffsetBackingStore.register("sink-b", Map::of).close();
    }

    private static byte[] bytes(ByteBuffer buffer)
    {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }
}
