package io.pgsink.connector.kafka;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A sink connector whose task does nothing with the records it is handed: what a worker costs with
 * a given converter, the ceiling of any sink ({@link KafkaConnectThroughputIT}). It touches each
 * record's key, value and headers (so that nothing converted lazily is skipped), counts them, and
 * once it was handed {@code noop.records} records writes the file {@code noop.done.file}.
 */
public final class NoOpSinkConnector
        extends SinkConnector
{
    static final String RECORDS = "noop.records";
    static final String DONE_FILE = "noop.done.file";

    private Map<String, String> properties;

    @Override
    public void start(Map<String, String> properties)
    {
        this.properties = Map.copyOf(properties);
    }

    @Override
    public Class<? extends Task> taskClass()
    {
        return NoOpSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks)
    {
        return List.of(properties);
    }

    @Override
    public void stop() {}

    @Override
    public ConfigDef config()
    {
        return new ConfigDef()
                .define(RECORDS, ConfigDef.Type.LONG, ConfigDef.Importance.HIGH, "records to take before writing the file")
                .define(DONE_FILE, ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "the file written once they were");
    }

    @Override
    public String version()
    {
        return "1";
    }

    /** The task of {@link NoOpSinkConnector}. */
    public static final class NoOpSinkTask
            extends SinkTask
    {
        private long expected;
        private Path doneFile;
        private long records;
        private long touched;

        @Override
        public String version()
        {
            return "1";
        }

        @Override
        public void start(Map<String, String> properties)
        {
            expected = Long.parseLong(properties.get(RECORDS));
            doneFile = Paths.get(properties.get(DONE_FILE));
        }

        @Override
        public void put(Collection<SinkRecord> batch)
        {
            for (SinkRecord record : batch) {
                touched += (record.key() != null ? 1 : 0) + (record.value() != null ? 1 : 0) + record.headers().size();
            }
            records += batch.size();
            if (records >= expected && !Files.exists(doneFile)) {
                try {
                    Files.writeString(doneFile, records + " records, " + touched + " keys, values and headers");
                }
                catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }

        @Override
        public void stop() {}
    }
}
