package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.TestingPostgreSqlServer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AbstractKafkaConnectSinkTest} with {@code record.format=debezium-json}: the worker hands
 * the task the records' bytes ({@code ByteArrayConverter}, for headers too) and pgsink reads Debezium's JSON
 * itself.
 * Transforms cannot run on bytes in the sink's worker, so the flattened cases are the source
 * side's business here ({@link DebeziumJsonRecordsTest} covers records flattened there).
 */
class KafkaConnectSinkDebeziumJsonIT
        extends AbstractKafkaConnectSinkTest
{
    @Override
    protected TestingPostgreSqlServer targetServer()
    {
        return TestingPostgreSqlServer.target();
    }

    @Override
    protected Map<String, String> recordSettings()
    {
        // the setup the docs recommend: no converter parses keys, values or headers in the worker
        return Map.of("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter",
                "value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter",
                "header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter",
                "record.format", "debezium-json");
    }

    @Override
    protected boolean takesSinkSideTransforms()
    {
        return false;
    }

    /**
     * A record that is not JSON fails the task, naming where it is and why but not what it holds;
     * under errors.tolerance=all it goes to the dead-letter queue as it was, and the rest is applied.
     */
    @Test
    void unreadableRecordsFailTheTaskOrGoToTheDeadLetterQueue()
            throws Exception
    {
        List<Field> columns = List.of(new Field("id", 0, Schema.INT64_SCHEMA), new Field("status", 1, Schema.OPTIONAL_STRING_SCHEMA));
        DebeziumTopic garbled = new DebeziumTopic("it", "public", "garbled", List.of("id"), columns);
        connect.kafka().createTopic(garbled.topic(), 1);
        connect.kafka().createTopic("pgsink-json-dlq", 1);
        schema.execute("CREATE TABLE garbled (id bigint PRIMARY KEY, status text)", "CREATE TABLE garbled_tolerant (id bigint PRIMARY KEY, status text)");
        garbled.insert(producer, 0, garbled.row("id", 1L, "status", "new"));
        producer.send(new ProducerRecord<>(garbled.topic(), 0, null, "{\"schema\": not json, secret".getBytes(StandardCharsets.UTF_8))).get();
        garbled.insert(producer, 0, garbled.row("id", 3L, "status", "new"));

        connect.configureConnector("garbled", connector("garbled", garbled.topic(), schema.name() + ".garbled", 1));
        connect.assertions().assertConnectorIsRunningAndTasksHaveFailed("garbled", 1, "the task did not fail");
        ConnectorStateInfo status = connect.connectorStatus("garbled");
        assertThat(status.tasks().get(0).trace())
                .contains("Cannot read the value of the record of topic it.public.garbled partition 0 at offset 1 as Debezium JSON with schema (record.format=debezium-json): "
                        + "it is not valid JSON (near byte")
                .doesNotContain("secret");
        // the record before it is applied (the worker's final offset commit flushes it), none after it
        awaitRows("SELECT id, status FROM garbled ORDER BY id", List.of(List.of("1", "new")));
        connect.deleteConnector("garbled");

        Map<String, String> tolerant = connector("garbled-tolerant", garbled.topic(), schema.name() + ".garbled_tolerant", 1);
        tolerant.put("errors.tolerance", "all");
        tolerant.put("errors.deadletterqueue.topic.name", "pgsink-json-dlq");
        tolerant.put("errors.deadletterqueue.topic.replication.factor", "1");
        tolerant.put("errors.deadletterqueue.context.headers.enable", "true");
        startConnector("garbled-tolerant", tolerant, 1);
        awaitRows("SELECT id, status FROM garbled_tolerant ORDER BY id", List.of(List.of("1", "new"), List.of("3", "new")));
        ConsumerRecords<byte[], byte[]> dead = connect.kafka().consume(1, Duration.ofMinutes(3).toMillis(), "pgsink-json-dlq");
        assertThat(dead.count()).isEqualTo(1);
        ConsumerRecord<byte[], byte[]> record = dead.iterator().next();
        assertThat(new String(record.value(), StandardCharsets.UTF_8)).isEqualTo("{\"schema\": not json, secret");
        assertThat(new String(record.headers().lastHeader("__connect.errors.exception.message").value(), StandardCharsets.UTF_8)).contains("partition 0 at offset 1").doesNotContain("secret");
        connect.deleteConnector("garbled-tolerant");
    }
}
