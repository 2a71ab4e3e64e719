package io.pgsink.connector.kafka;

import io.pgsink.core.change.TableId;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigProblem;
import io.pgsink.core.error.SinkException;
import io.pgsink.merge.MergeApplier;
import io.pgsink.merge.session.TargetCheck;
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
import java.util.Optional;
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
            log.warn("{} - cannot prepare the offsets table yet; the tasks will retry: {}", config.sinkName(),
                    e.getMessage());
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
     * then pgsink's whole-configuration ones (unknown keys, values that do not go together), then,
     * for a configuration without problems, the target's ({@link TargetCheck}, as
     * {@code pgsink check} does): the login ({@code target.url}, {@code target.user},
     * {@code target.password}), the TEMPORARY privilege, the offsets table, and the target tables
     * of {@code topics} when the routing names them without the records
     * ({@code target.table.name.format} with {@code ${topic}} or a fixed table). Each problem is
     * attached to its key (a key no one knows gets an entry of its own); one problem per key, the
     * first found.
     */
    @Override
    public Config validate(Map<String, String> properties)
    {
        Map<String, ConfigValue> values = new LinkedHashMap<>();
        for (ConfigValue value : config().validate(properties)) {
            values.put(value.name(), value);
        }
        List<ConfigProblem> problems = KafkaSinkConfig.problems(properties);
        for (ConfigProblem problem : problems) {
            addError(values, properties, problem.key(), problem.message());
        }
        boolean valid = problems.isEmpty()
                && values.values().stream().allMatch(value -> value.errorMessages().isEmpty());
        if (valid) {
            KafkaSinkConfig config = KafkaSinkConfig.parse(properties);
            for (TargetCheck.Finding finding
                    : new TargetCheck(config.sink(), "", false).run(targetTables(config, properties.get("topics")))) {
                if (finding.status() == TargetCheck.Status.FAIL) {
                    addError(values, properties, finding.key(), finding.message());
                }
                else if (finding.status() == TargetCheck.Status.WARN) {
                    log.warn("{} - {}", config.sinkName(), finding.message());
                }
            }
        }
        return new Config(new ArrayList<>(values.values()));
    }

    private static void addError(Map<String, ConfigValue> values, Map<String, String> properties, String key,
            String message)
    {
        ConfigValue value = values.computeIfAbsent(key,
                name -> new ConfigValue(name, properties.get(name), List.of(), new ArrayList<>()));
        if (value.errorMessages().isEmpty()) {
            value.addErrorMessage(message);
        }
    }

    /** The target tables of {@code topics}, when the routing names them without reading records. */
    private static List<TargetCheck.Table> targetTables(KafkaSinkConfig config,
            @org.jetbrains.annotations.Nullable String topics)
    {
        List<TargetCheck.Table> tables = new ArrayList<>();
        if (topics == null || config.routing().needsSourceTable()) {
            return tables;
        }
        List<TableId> seen = new ArrayList<>();
        for (String topic : topics.split(",")) {
            if (topic.isBlank()) {
                continue;
            }
            TableId target = config.routing().route(topic.strip(), null);
            if (!seen.contains(target)) {
                seen.add(target);
                tables.add(new TargetCheck.Table(target, Optional.empty(), List.of()));
            }
        }
        return tables;
    }
}
