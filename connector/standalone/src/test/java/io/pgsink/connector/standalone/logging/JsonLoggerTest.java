package io.pgsink.connector.standalone.logging;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code log.format=json}: one JSON object per event and line, slf4j-simple's levels; chosen before anything logs. */
class JsonLoggerTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void oneObjectPerLineWithTheFormattedMessageAndTheStackTrace()
            throws Exception
    {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        Logger logger = new JsonLoggerFactory(out).getLogger("io.pgsink.Example");
        logger.info("{} - table {} has \"quotes\",\nlines and ünïcode", "orders", "\"public\".\"t\"");
        logger.warn("retrying", new SQLException("connection lost", "08006"));
        logger.atInfo().setMessage("fluent {}").addArgument(42).log();
        // slf4j-simple's default level here is INFO
        logger.debug("not logged");

        List<JsonNode> events = new ArrayList<>();
        for (String line : bytes.toString(StandardCharsets.UTF_8).split("\n")) {
            events.add(JSON.readTree(line));
        }
        assertThat(events).hasSize(3);
        JsonNode first = events.get(0);
        assertThat(first.path("level").asText()).isEqualTo("INFO");
        assertThat(first.path("logger").asText()).isEqualTo("io.pgsink.Example");
        assertThat(first.path("thread").asText()).isEqualTo(Thread.currentThread().getName());
        assertThat(first.path("time").asText()).matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z");
        assertThat(first.path("message").asText())
                .isEqualTo("orders - table \"public\".\"t\" has \"quotes\",\nlines and ünïcode");
        assertThat(first.has("exception")).isFalse();
        JsonNode second = events.get(1);
        assertThat(second.path("level").asText()).isEqualTo("WARN");
        assertThat(second.path("message").asText()).isEqualTo("retrying");
        assertThat(second.path("exception").asText()).startsWith("java.sql.SQLException: connection lost\n\tat ");
        assertThat(events.get(2).path("message").asText()).isEqualTo("fluent 42");
    }

    @Test
    void theFormatIsChosenBySystemPropertyOrEnvironment()
    {
        Properties system = new Properties();
        assertThat(LogFormat.select(system, Map.of())).isEmpty();
        assertThat(system).doesNotContainKey(LogFormat.SLF4J_PROVIDER);

        assertThat(LogFormat.select(system, Map.of("PGSINK_LOG_FORMAT", "json"))).isEmpty();
        assertThat(system.getProperty(LogFormat.SLF4J_PROVIDER)).isEqualTo(JsonServiceProvider.class.getName());
        // slf4j would say on standard error which provider it loads
        assertThat(system.getProperty(LogFormat.SLF4J_VERBOSITY)).isEqualTo("WARN");

        Properties text = new Properties();
        text.setProperty("pgsink.log.format", "text");
        assertThat(LogFormat.select(text, Map.of("PGSINK_LOG_FORMAT", "json"))).as("the system property wins")
                .isEmpty();
        assertThat(text).doesNotContainKey(LogFormat.SLF4J_PROVIDER);

        Properties wrong = new Properties();
        assertThat(LogFormat.select(wrong, Map.of("PGSINK_LOG_FORMAT", "logfmt")))
                .isEqualTo(Optional.of("Invalid value 'logfmt' for environment variable PGSINK_LOG_FORMAT: "
                        + "must be one of text, json"));
        assertThat(wrong).doesNotContainKey(LogFormat.SLF4J_PROVIDER);
    }
}
