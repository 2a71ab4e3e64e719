package io.pgsink.connector.kafka;

import io.pgsink.core.TableId;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TopicTableNameFormatTest
{
    private static final TableId ORDERS = TableId.of("shop", "Order Lines");

    @Test
    void routesBySourceTable()
    {
        TopicTableNameFormat format = TopicTableNameFormat.parse("${schema}.${table}");
        assertThat(format.needsSourceTable()).isTrue();
        assertThat(format.route("srv.shop.order_lines", ORDERS)).isEqualTo(ORDERS);
        assertThat(TopicTableNameFormat.parse("${source.schema}.${source.table}").route("t", ORDERS)).isEqualTo(ORDERS);
        // without a '.', the target schema is the source schema
        assertThat(TopicTableNameFormat.parse("copy_of_${table}").route("t", ORDERS)).isEqualTo(TableId.of("shop", "copy_of_Order Lines"));
        assertThat(TopicTableNameFormat.parse("warehouse.${source.schema}_${source.table}").route("t", ORDERS)).isEqualTo(TableId.of("warehouse", "shop_Order Lines"));
    }

    @Test
    void routesByTopic()
    {
        TopicTableNameFormat format = TopicTableNameFormat.parse("${topic}");
        assertThat(format.needsSourceTable()).isFalse();
        // dots become underscores, as in Debezium's JDBC sink; no schema given: public, whatever the source
        assertThat(format.route("dbserver1.public.orders", null)).isEqualTo(TableId.of("public", "dbserver1_public_orders"));
        assertThat(format.route("dbserver1.public.orders", ORDERS)).isEqualTo(TableId.of("public", "dbserver1_public_orders"));
        assertThat(TopicTableNameFormat.parse("raw.${topic}").route("a-b.c", null)).isEqualTo(TableId.of("raw", "a-b_c"));
        assertThat(TopicTableNameFormat.parse("raw.${topic}_${source.table}").needsSourceTable()).isTrue();
    }

    @Test
    void routesToAFixedTable()
    {
        TopicTableNameFormat format = TopicTableNameFormat.parse("audit.events");
        assertThat(format.needsSourceTable()).isFalse();
        assertThat(format.route("anything", null)).isEqualTo(TableId.of("audit", "events"));
        // only the first '.' separates: the rest is part of the name
        assertThat(TopicTableNameFormat.parse("audit.events.v2").route("t", null)).isEqualTo(TableId.of("audit", "events.v2"));
    }

    @Test
    void refusesBadFormats()
    {
        assertThatThrownBy(() -> TopicTableNameFormat.parse("${topic"))
                .hasMessage("unclosed placeholder at position 0");
        assertThatThrownBy(() -> TopicTableNameFormat.parse("${db}.${table}"))
                .hasMessage("unknown placeholder ${db}; use ${topic}, ${source.schema} (or ${schema}) and ${source.table} (or ${table})");
        assertThatThrownBy(() -> TopicTableNameFormat.parse(".${table}"))
                .hasMessage("the schema part before '.' is empty");
        assertThatThrownBy(() -> TopicTableNameFormat.parse("${schema}."))
                .hasMessage("the table part is empty");
    }
}
