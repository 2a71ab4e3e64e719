package io.pgsink.core.mapping;

import io.pgsink.core.change.TableId;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Routing, as both adapters read {@code target.table.name.format}; the Kafka Connect sink routes by topic too. */
class TableNameFormatTest
{
    private static final TableId ORDERS = TableId.of("shop", "Order Lines");

    @Test
    void routesBySourceTable()
    {
        TableNameFormat format = TableNameFormat.parse("${schema}.${table}");
        assertThat(format.needsSourceTable()).isTrue();
        assertThat(format.route("srv.shop.order_lines", ORDERS)).isEqualTo(ORDERS);
        assertThat(TableNameFormat.parse("${source.schema}.${source.table}").route("t", ORDERS)).isEqualTo(ORDERS);
        // without a '.', the target schema is the source schema
        assertThat(TableNameFormat.parse("copy_of_${table}").route("t", ORDERS)).isEqualTo(TableId.of("shop", "copy_of_Order Lines"));
        assertThat(TableNameFormat.parse("warehouse.${source.schema}_${source.table}").route("t", ORDERS)).isEqualTo(TableId.of("warehouse", "shop_Order Lines"));
    }

    @Test
    void routesByTopic()
    {
        TableNameFormat format = TableNameFormat.parse("${topic}");
        assertThat(format.needsSourceTable()).isFalse();
        // dots become underscores, as in Debezium's JDBC sink; no schema given: public, whatever the source
        assertThat(format.route("dbserver1.public.orders", null)).isEqualTo(TableId.of("public", "dbserver1_public_orders"));
        assertThat(format.route("dbserver1.public.orders", ORDERS)).isEqualTo(TableId.of("public", "dbserver1_public_orders"));
        assertThat(TableNameFormat.parse("raw.${topic}").route("a-b.c", null)).isEqualTo(TableId.of("raw", "a-b_c"));
        assertThat(TableNameFormat.parse("raw.${topic}_${source.table}").needsSourceTable()).isTrue();
    }

    @Test
    void routesToAFixedTable()
    {
        TableNameFormat format = TableNameFormat.parse("audit.events");
        assertThat(format.needsSourceTable()).isFalse();
        assertThat(format.route("anything", null)).isEqualTo(TableId.of("audit", "events"));
        // only the first '.' separates: the rest is part of the name
        assertThat(TableNameFormat.parse("audit.events.v2").route("t", null)).isEqualTo(TableId.of("audit", "events.v2"));
    }

    @Test
    void refusesBadFormats()
    {
        assertThatThrownBy(() -> TableNameFormat.parse("${topic"))
                .hasMessage("unclosed placeholder at position 0");
        assertThatThrownBy(() -> TableNameFormat.parse("${db}.${table}"))
                .hasMessage("unknown placeholder ${db}; use ${topic}, ${source.schema} (or ${schema}) and ${source.table} (or ${table})");
        assertThatThrownBy(() -> TableNameFormat.parse(".${table}"))
                .hasMessage("the schema part before '.' is empty");
        assertThatThrownBy(() -> TableNameFormat.parse("${schema}."))
                .hasMessage("the table part is empty");
    }

    @Test
    void routesBySourceTableAloneWithoutTopic()
    {
        assertThat(TableNameFormat.parse("dw.${schema}_${table}").targetOf(ORDERS)).isEqualTo(TableId.of("dw", "shop_Order Lines"));
        assertThat(TableNameFormat.parse("dw.${schema}_${table}").usesTopic()).isFalse();
        assertThat(TableNameFormat.parse("raw.${topic}").usesTopic()).isTrue();
        assertThatThrownBy(() -> TableNameFormat.parse("raw.${topic}").targetOf(ORDERS)).isInstanceOf(IllegalStateException.class);
    }
}
