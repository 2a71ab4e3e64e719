package io.pgsink.connector.kafka;

import java.util.Map;

/**
 * {@link KafkaConnectCrashIT} with {@code flush.pipelined=true}: workers killed while a batch applies
 * on a task's applier thread; Kafka's committed offsets must still never run ahead of the target, and
 * the target ends with every change exactly once.
 */
class PipelinedKafkaConnectCrashIT
        extends KafkaConnectCrashIT
{
    @Override
    protected Map<String, String> extraProperties()
    {
        return Map.of("flush.pipelined", "true");
    }
}
