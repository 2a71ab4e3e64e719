package io.pgsink.connector.kafka;

import io.pgsink.core.ConfigProblem;
import io.pgsink.core.SinkConfig;
import io.pgsink.core.SinkException;
import io.pgsink.merge.MergeApplier;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.sink.SinkConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The pgsink Kafka Connect sink connector: applies Debezium change-event topics (full envelopes,
 * or records flattened by {@code ExtractNewRecordState}) to PostgreSQL or Greenplum, merged by
 * primary key and loaded with COPY, with exactly-once effect (see {@link PgsinkSinkTask}).
 *
 * <p>{@code tasks.max} tasks share the topics' partitions; each gets the same configuration,
 * with {@code sink.name} (default: the connector's name) under which they store their positions.
 * The configuration is validated as a whole ({@link KafkaSinkConfig}): every problem is reported
 * at once, by {@link #validate} to Connect's REST API and by {@link #start} as the failure.
 */
public final class PgsinkSinkConnector
        extends SinkConnector
{
    private static final Logger log = LoggerFactory.getLogger(PgsinkSinkConnector.class);
    private static final String POM_PROPERTIES = "/META-INF/maven/io.pgsink/connector-kafka/pom.properties";

    private Map<String, String> taskProperties = Map.of();

    @Override
    public String version()
    {
        return pluginVersion();
    }

    /** The version of the jar the connector was loaded from, or {@code development} outside a built jar. */
    static String pluginVersion()
    {
        try (InputStream in = PgsinkSinkConnector.class.getResourceAsStream(POM_PROPERTIES)) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                return properties.getProperty("version", "development");
            }
        }
        catch (IOException e) {
            // fall through
        }
        return "development";
    }

    @Override
    public void start(Map<String, String> properties)
    {
        KafkaSinkConfig config = KafkaSinkConfig.parse(properties);
        if (log.isInfoEnabled()) {
            config.describe().forEach((key, value) -> log.info("{} - {} = {}", config.sinkName(), key, value));
        }
        Map<String, String> forTasks = new HashMap<>(properties);
        forTasks.put(SinkConfig.SINK_NAME, config.sinkName());
        taskProperties = Map.copyOf(forTasks);
        createOffsetsTable(config);
    }

    /**
     * Creates the offsets table before the tasks start, so that they do not race to create it.
     * Not reaching the target here is no failure: the tasks retry.
     */
    private static void createOffsetsTable(KafkaSinkConfig config)
    {
        try (MergeApplier applier = new MergeApplier(config.sink())) {
            applier.committedPositions();
        }
        catch (SinkException e) {
            log.warn("{} - cannot prepare the offsets table yet; the tasks will retry: {}", config.sinkName(), e.getMessage());
        }
    }

    @Override
    public Class<? extends Task> taskClass()
    {
        return PgsinkSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks)
    {
        List<Map<String, String>> configs = new ArrayList<>(maxTasks);
        for (int i = 0; i < maxTasks; i++) {
            configs.add(taskProperties);
        }
        return configs;
    }

    @Override
    public void stop()
    {
    }

    @Override
    public ConfigDef config()
    {
        return KafkaSinkConfig.CONFIG_DEF;
    }

    /**
     * Connect's per-key checks (the {@link #config() ConfigDef}, built from pgsink's key tables),
     * then pgsink's whole-configuration ones (unknown keys, values that do not go together), each
     * problem attached to its key (a key no one knows gets an entry of its own); one problem per
     * key, the first found.
     */
    @Override
    public Config validate(Map<String, String> properties)
    {
        Map<String, ConfigValue> values = new LinkedHashMap<>();
        for (ConfigValue value : config().validate(properties)) {
            values.put(value.name(), value);
        }
        for (ConfigProblem problem : KafkaSinkConfig.problems(properties)) {
            ConfigValue value = values.computeIfAbsent(problem.key(), key -> new ConfigValue(key, properties.get(key), List.of(), new ArrayList<>()));
            if (value.errorMessages().isEmpty()) {
                value.addErrorMessage(problem.message());
            }
        }
        return new Config(new ArrayList<>(values.values()));
    }
}
