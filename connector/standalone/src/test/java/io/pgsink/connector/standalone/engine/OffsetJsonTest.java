package io.pgsink.connector.standalone.engine;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class OffsetJsonTest
{
    private static final ObjectMapper JACKSON = new ObjectMapper()
            .configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);

    @Test
    void writesDebeziumOffsetsWithoutJacksonAsJacksonDoes()
            throws Exception
    {
        Map<String, Object> offset = new HashMap<>();
        offset.put("lsn_proc", 24_023_128L);
        offset.put("messageType", "UPDATE");
        offset.put("lsn_commit", 24_023_000L);
        offset.put("lsn", 24_023_128L);
        offset.put("txId", 742);
        offset.put("ts_usec", 1_764_230_400_123_456L);
        offset.put("snapshot", true);
        offset.put("transaction_id", null);
        offset.put("lsn_ähnlich", "größe €");
        String flat = OffsetJson.writeFlat(offset);
        assertThat(flat).isNotNull().isEqualTo(JACKSON.writeValueAsString(offset));
        assertThat(OffsetJson.write(offset)).isEqualTo(flat);
        assertThat(OffsetJson.readMap(flat)).containsEntry("txId", 742).containsEntry("lsn", 24_023_128);
        Map<String, Object> partition = new LinkedHashMap<>();
        partition.put("server", "bench");
        assertThat(OffsetJson.writeFlat(partition)).isEqualTo("{\"server\":\"bench\"}");
        assertThat(OffsetJson.write(Map.of())).isEqualTo("{}");
        assertThat(OffsetJson.write(null)).isEqualTo("{}");
    }

    @Test
    void leavesToJacksonWhatNeedsEscapingOrIsNotFlat()
            throws Exception
    {
        List<Map<String, ?>> others = List.of(
                Map.of("quote", "say \"hi\""),
                Map.of("backslash", "a\\b"),
                Map.of("newline", "a\nb"),
                Map.of("key \"quoted\"", 1),
                Map.of("double", 1.5),
                Map.of("decimal", new BigDecimal("1.50")),
                Map.of("nested", Map.of("b", 2, "a", 1)),
                Map.of("list", List.of(1, 2)));
        for (Map<String, ?> map : others) {
            assertThat(OffsetJson.writeFlat(map)).as("%s", map).isNull();
            assertThat(OffsetJson.write(map)).as("%s", map).isEqualTo(JACKSON.writeValueAsString(map));
        }
    }
}
