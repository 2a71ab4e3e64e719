package io.pgsink.connector.standalone.verify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.connector.standalone.load.LoadFormat;
import io.pgsink.connector.standalone.load.LoadSettings;
import io.pgsink.core.error.ErrorCode;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.error.SinkException;
import io.pgsink.core.change.TableId;
import io.pgsink.core.mapping.TableNameFormat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.UnaryOperator;

/**
 * What {@code pgsink verify} and {@code pgsink repair} compare for a Kafka Connect sink, which has no
 * source connection of its own: the sink connector's properties (the target, {@code target.table.name.format},
 * column selection and renames, metadata columns, soft deletes, history tables: every key pgsink shares with
 * the standalone service; Kafka Connect's own keys and the connector's record-format keys are ignored), a
 * source connection given apart, and the compared tables, named by the connector's {@code topics} (Debezium's
 * {@code <topic.prefix>.<schema>.<table>}) or given apart.
 *
 * <p>There is no replication slot to watch: a differing key is re-checked by time ({@link Recheck}).
 */
public final class ConnectorSettings
{
    private static final String CONNECTOR_NAME = "name";
    private static final String TOPICS = "topics";
    private static final String TOPICS_REGEX = "topics.regex";

    private ConnectorSettings() {}

    /**
     * @param connector the sink connector's properties
     * @param sourceUrl the source's JDBC URL ({@code jdbc:postgresql://host:port/database})
     * @param sourceUser the source user, when not in the URL
     * @param sourcePassword the source password, when not in the URL (nor in pgjdbc's {@code .pgpass})
     * @param tables the compared source tables ({@code schema.table}); empty to take them from {@code topics}
     * @throws SinkException ({@link ErrorCode#CONFIG}) naming every problem
     */
    public static LoadSettings of(Map<String, String> connector, String sourceUrl, Optional<String> sourceUser,
            Optional<String> sourcePassword, List<String> tables)
    {
        Map<String, String> sinkProperties = new HashMap<>();
        connector.forEach((key, value) -> {
            if (SinkConfig.isSinkKey(key) || key.startsWith(SinkConfig.TARGET_JDBC_PREFIX)) {
                sinkProperties.put(key, value);
            }
        });
        if (sinkProperties.getOrDefault(SinkConfig.SINK_NAME, "").isEmpty() && connector.containsKey(CONNECTOR_NAME)) {
            // as the connector does: an empty sink.name is the connector's name
            sinkProperties.put(SinkConfig.SINK_NAME, connector.get(CONNECTOR_NAME));
        }
        String routingFormat = sinkProperties.get(SinkConfig.TARGET_TABLE_NAME_FORMAT);
        TableNameFormat format = routingFormat == null ? null : TableNameFormat.parse(routingFormat);
        if (format != null && format.usesTopic()) {
            // the service refuses ${topic}, which only Kafka records have: verify routes by the topics here,
            // and repair, which routes by table, refuses such a table
            sinkProperties.remove(SinkConfig.TARGET_TABLE_NAME_FORMAT);
        }
        SinkConfig sink = SinkConfig.parse(sinkProperties);
        if (format == null) {
            format = sink.tableNameFormat();
        }
        List<String> problems = new ArrayList<>();
        Map<TableId, String> topicOf = new LinkedHashMap<>();
        for (String topic : split(connector.getOrDefault(TOPICS, ""))) {
            String[] parts = topic.split("\\.");
            if (parts.length < 3) {
                problems.add("topic " + topic + " does not read <topic.prefix>.<schema>.<table>: name the compared"
                        + " tables with --source-tables");
                continue;
            }
            topicOf.put(new TableId(parts[parts.length - 2], parts[parts.length - 1]), topic);
        }
        List<TableId> compared = new ArrayList<>();
        if (tables.isEmpty()) {
            if (connector.containsKey(TOPICS_REGEX) && topicOf.isEmpty()) {
                problems.add(TOPICS_REGEX + " names no table: name the compared tables with --source-tables");
            }
            compared.addAll(topicOf.keySet());
            if (compared.isEmpty() && problems.isEmpty()) {
                problems.add("the connector configuration has no " + TOPICS + ": name the compared tables with"
                        + " --source-tables");
            }
        }
        else {
            for (String table : tables) {
                int dot = table.indexOf('.');
                if (dot <= 0 || dot == table.length() - 1) {
                    problems.add("Invalid value " + table + " for --source-tables: write schema.table");
                }
                else {
                    compared.add(new TableId(table.substring(0, dot), table.substring(dot + 1)));
                }
            }
        }
        if (format.usesTopic()) {
            for (TableId table : compared) {
                if (!topicOf.containsKey(table)) {
                    problems.add(SinkConfig.TARGET_TABLE_NAME_FORMAT + " routes by ${topic}, and no topic of "
                            + TOPICS + " names " + table);
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new SinkException(ErrorCode.CONFIG, "Cannot verify the Kafka Connect sink '" + sink.sinkName()
                    + "': " + String.join("; ", problems));
        }
        TableNameFormat routingByTopic = format;
        UnaryOperator<TableId> routing = format.usesTopic()
                ? table -> routingByTopic.route(topicOf.get(table), table)
                : format::targetOf;
        LoadSettings.SourceConnector source = (applicationName, replication) -> {
            Properties properties = new Properties();
            sourceUser.ifPresent(user -> properties.setProperty("user", user));
            sourcePassword.ifPresent(password -> properties.setProperty("password", password));
            properties.setProperty("ApplicationName", applicationName);
            properties.setProperty("logServerErrorDetail", "false");
            return DriverManager.getConnection(sourceUrl, properties);
        };
        List<TableId> captured = List.copyOf(compared);
        LoadSettings.CaptureFilter filter = new LoadSettings.CaptureFilter()
        {
            @Override
            public boolean capturesTable(String schema, String table)
            {
                return captured.contains(new TableId(schema, table));
            }

            @Override
            public boolean capturesColumn(String schema, String table, String column)
            {
                return true;
            }

            @Override
            public boolean viaPartitionRoot()
            {
                return false;
            }
        };
        return new LoadSettings(sink, source, "", "", "", filter, routing, 1, 1, LoadFormat.TEXT, 10_000, 1, false);
    }

    /**
     * The connector's properties from {@code file}: a properties file (as {@code connect-standalone} reads it),
     * or JSON, either the Connect REST API's {@code {"name": ..., "config": {...}}} or the {@code config} object.
     *
     * @throws SinkException ({@link ErrorCode#CONFIG}) when the file cannot be read
     */
    public static Map<String, String> read(Path file)
    {
        try {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            Map<String, String> properties = new HashMap<>();
            if (text.strip().startsWith("{")) {
                JsonNode root = new ObjectMapper().readTree(text);
                JsonNode config = root.has("config") ? root.get("config") : root;
                config.fields().forEachRemaining(field -> properties.put(field.getKey(), field.getValue().asText()));
                if (root.has(CONNECTOR_NAME) && !properties.containsKey(CONNECTOR_NAME)) {
                    properties.put(CONNECTOR_NAME, root.get(CONNECTOR_NAME).asText());
                }
                return properties;
            }
            Properties loaded = new Properties();
            loaded.load(new StringReader(text));
            for (String name : loaded.stringPropertyNames()) {
                properties.put(name.strip(), loaded.getProperty(name).strip());
            }
            return properties;
        }
        catch (IOException e) {
            throw new SinkException(ErrorCode.CONFIG, "Cannot read the connector configuration "
                    + file.toAbsolutePath() + ": " + e.getMessage(), e);
        }
    }

    private static List<String> split(String list)
    {
        List<String> items = new ArrayList<>();
        for (String item : list.split(",")) {
            if (!item.isBlank()) {
                items.add(item.strip());
            }
        }
        return items;
    }
}
