package io.pgsink.connector.kafka;

import io.pgsink.core.change.SourcePosition;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KafkaPositionsTest
{
    @Test
    void partitionsReadBackWhateverTheTopicName()
    {
        for (String topic : new String[] {"orders", "dbserver1.public.orders", "a-b-c", "x-1", "-", "t.-7"}) {
            TopicPartition partition = new TopicPartition(topic, 12);
            String stored = KafkaPositions.partition(partition);
            assertThat(KafkaPositions.parsePartition(stored)).contains(partition);
        }
        assertThat(KafkaPositions.partition(new TopicPartition("dbserver1.public.orders", 3))).isEqualTo("dbserver1.public.orders-3");
    }

    @Test
    void otherPartitionsAreNotKafkaOnes()
    {
        assertThat(KafkaPositions.parsePartition("{\"server\":\"db1\"}")).isEqualTo(Optional.empty());
        assertThat(KafkaPositions.parsePartition("orders-")).isEqualTo(Optional.empty());
        assertThat(KafkaPositions.parsePartition("-3")).isEqualTo(Optional.empty());
        assertThat(KafkaPositions.parsePartition("orders-3a")).isEqualTo(Optional.empty());
        assertThat(KafkaPositions.parsePartition("orders-99999999999")).isEqualTo(Optional.empty());
    }

    @Test
    void offsetIsTheLastAppliedRecord()
    {
        SourcePosition position = KafkaPositions.position("orders-3", 4711);
        assertThat(position).isEqualTo(new SourcePosition("orders-3", "4711"));
        assertThat(position.toString()).isEqualTo("offset 4711 of orders-3");
        assertThat(KafkaPositions.parseOffset(position)).isEqualTo(4711);
        assertThatThrownBy(() -> KafkaPositions.parseOffset(new SourcePosition("orders-3", "{\"lsn\":1}"))).isInstanceOf(NumberFormatException.class);
        assertThatThrownBy(() -> KafkaPositions.parseOffset(new SourcePosition("orders-3", "-1"))).isInstanceOf(NumberFormatException.class);
    }
}
