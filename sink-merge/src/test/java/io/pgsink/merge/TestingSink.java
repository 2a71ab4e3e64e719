package io.pgsink.merge;

import io.pgsink.copy.testing.Poll;
import io.pgsink.copy.testing.TestingSchema;
import io.pgsink.core.buffer.BufferedSink;
import io.pgsink.core.config.SinkConfig;

import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Builds sinks that write into a {@link TestingSchema}, and reads what they wrote. */
final class TestingSink
{
    private TestingSink() {}

    static Map<String, String> properties(TestingSchema schema, Map<String, String> overrides)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put(SinkConfig.TARGET_URL, schema.server().jdbcUrl());
        String user = schema.server().properties().getProperty("user");
        if (user != null) {
            properties.put(SinkConfig.TARGET_USER, user);
        }
        String password = schema.server().properties().getProperty("password");
        if (password != null) {
            properties.put(SinkConfig.TARGET_PASSWORD, password);
        }
        properties.put(SinkConfig.TARGET_TABLE_NAME_FORMAT, schema.name() + ".${table}");
        properties.put(SinkConfig.OFFSETS_SCHEMA, schema.name());
        // lets a test find its own connections in pg_stat_activity, apart from other tests' and sinks'
        properties.put(SinkConfig.TARGET_JDBC_PREFIX + "ApplicationName", applicationName(schema));
        properties.putAll(overrides);
        return properties;
    }

    static String applicationName(TestingSchema schema)
    {
        return "pgsink-test " + schema.name();
    }

    /** Waits up to 5 s for the test's sink connections to end (a closed connection's backend exits asynchronously). */
    static void awaitNoOpenConnections(TestingSchema schema)
    {
        String count = "SELECT count(*) FROM pg_stat_activity WHERE application_name = '" + applicationName(schema) + "'";
        Poll.until("the sink connections of " + schema.name() + " to end", Duration.ofSeconds(5),
                () -> assertThat(Long.parseLong(schema.query(count).get(0).get(0))).as("open sink connections").isZero());
    }

    static SinkConfig config(TestingSchema schema, Map<String, String> overrides)
    {
        return SinkConfig.parse(properties(schema, overrides));
    }

    static BufferedSink sink(TestingSchema schema, Map<String, String> overrides)
    {
        SinkConfig config = config(schema, overrides);
        return new BufferedSink(config.sinkName(), config.flushPolicy(), new MergeApplier(config));
    }

    /** Every row of the query, each column as text (NULL as null). */
    static List<List<String>> query(TestingSchema schema, String sql)
            throws SQLException
    {
        return schema.query(sql);
    }
}
