package io.pgsink.connector.standalone.verify;

import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.change.TableId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConnectorSettingsTest
{
    private static final String SOURCE_URL = "jdbc:postgresql://source:5432/shop";

    @TempDir
    Path directory;

    private static Map<String, String> connector()
    {
        Map<String, String> connector = new HashMap<>();
        connector.put("name", "shop-sink");
        connector.put("connector.class", "io.pgsink.connector.kafka.PgsinkSinkConnector");
        connector.put("tasks.max", "4");
        connector.put("topics", "shop.public.orders, shop.sales.items");
        connector.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
        connector.put("transforms", "unwrap");
        connector.put("target.url", "jdbc:postgresql://target:5432/warehouse");
        return connector;
    }

    private static LoadSettings settings(Map<String, String> connector, List<String> tables)
    {
        return ConnectorSettings.of(connector, SOURCE_URL, Optional.of("verifier"), Optional.empty(), tables);
    }

    @Test
    void tablesFromTopicsAndTheConnectorsName()
    {
        Map<String, String> connector = connector();
        connector.put("target.table.name.format", "raw.${schema}_${table}");

        LoadSettings settings = settings(connector, List.of());

        assertThat(settings.sink().sinkName()).isEqualTo("shop-sink");
        assertThat(settings.slotName()).isEmpty();
        assertThat(settings.captured().capturesTable("public", "orders")).isTrue();
        assertThat(settings.captured().capturesTable("sales", "items")).isTrue();
        assertThat(settings.captured().capturesTable("public", "items")).isFalse();
        assertThat(settings.routing().apply(new TableId("sales", "items")))
                .isEqualTo(new TableId("raw", "sales_items"));
    }

    @Test
    void routingByTopic()
    {
        Map<String, String> connector = connector();
        connector.put("target.table.name.format", "${topic}");

        LoadSettings settings = settings(connector, List.of());

        assertThat(settings.routing().apply(new TableId("public", "orders")))
                .isEqualTo(new TableId("public", "shop_public_orders"));
        assertThatThrownBy(() -> settings(connector, List.of("public.payments")))
                .isInstanceOf(SinkException.class)
                .hasMessageContaining("target.table.name.format routes by ${topic}, and no topic of topics names "
                        + "\"public\".\"payments\"");
    }

    @Test
    void topicPatternNeedsTheTables()
    {
        Map<String, String> connector = connector();
        connector.remove("topics");
        connector.put("topics.regex", "shop\\..*");

        assertThatThrownBy(() -> settings(connector, List.of()))
                .isInstanceOf(SinkException.class)
                .hasMessage("Cannot verify the Kafka Connect sink 'shop-sink': topics.regex names no table: name the "
                        + "compared tables with --source-tables");
        assertThat(settings(connector, List.of("public.orders")).captured().capturesTable("public", "orders")).isTrue();
        assertThatThrownBy(() -> settings(connector, List.of("orders")))
                .hasMessageContaining("Invalid value orders for --source-tables: write schema.table");
    }

    @Test
    void readsPropertiesAndRestJson()
            throws Exception
    {
        Path properties = Files.writeString(directory.resolve("sink.properties"),
                "name=shop-sink\ntopics=shop.public.orders\ntarget.url=jdbc:postgresql://target/w\n");
        Path json = Files.writeString(directory.resolve("sink.json"), "{\"name\": \"shop-sink\", \"config\": "
                + "{\"topics\": \"shop.public.orders\", \"target.url\": \"jdbc:postgresql://target/w\"}}");

        assertThat(ConnectorSettings.read(properties)).isEqualTo(ConnectorSettings.read(json))
                .containsEntry("name", "shop-sink").containsEntry("topics", "shop.public.orders");
    }
}
