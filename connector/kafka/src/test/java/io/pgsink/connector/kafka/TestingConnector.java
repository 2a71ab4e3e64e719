package io.pgsink.connector.kafka;

import io.pgsink.copy.testing.TestingSchema;

import java.util.HashMap;
import java.util.Map;

/** The configuration every test's pgsink connector or task starts from. */
final class TestingConnector
{
    private TestingConnector() {}

    /**
     * A pgsink connector reading {@code topics} into {@code schema}: its server's URL and credentials,
     * tables named {@code <schema>.${table}}, positions in that schema too; a mutable map, for the
     * test's own keys.
     */
    static Map<String, String> properties(TestingSchema schema, String topics)
    {
        Map<String, String> properties = new HashMap<>();
        properties.put("connector.class", PgsinkSinkConnector.class.getName());
        properties.put("topics", topics);
        properties.put("target.url", schema.server().jdbcUrl());
        schema.server().properties().forEach((key, value) -> properties.put("target." + key, (String) value));
        properties.put("target.table.name.format", schema.name() + ".${table}");
        properties.put("offsets.schema", schema.name());
        return properties;
    }
}
