package io.pgsink.connector.kafka;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged sample (etc/pgsink-sink.json in the plugin archive) is a configuration the connector
 * accepts, and the connector example of docs/guides/kafka-connect.md holds every setting of it.
 */
class KafkaConnectGuideSampleTest
{
    @Test
    void guideExampleHoldsThePackagedSample()
            throws IOException
    {
        String sample = Files.readString(Path.of("src", "kafka-connect", "pgsink-sink.json"));
        String guide = Files.readString(Path.of("..", "..", "docs", "guides", "kafka-connect.md"));
        for (String line : sample.split("\n")) {
            String setting = line.strip();
            boolean isSetting = setting.startsWith("\"") && setting.contains("\": \"")
                    && !setting.startsWith("\"name\"") && !setting.startsWith("\"config\"");
            if (isSetting) {
                String withoutComma = setting.endsWith(",") ? setting.substring(0, setting.length() - 1) : setting;
                assertThat(guide).as("docs/guides/kafka-connect.md, the connector example").contains(withoutComma);
            }
        }
    }

    @Test
    void packagedSampleIsAcceptedByTheConnector()
            throws IOException
    {
        String sample = Files.readString(Path.of("src", "kafka-connect", "pgsink-sink.json"));
        Map<String, String> config = new HashMap<>();
        Pattern json = Pattern.compile("^\\s*\"([^\"]+)\": \"((?:[^\"\\\\]|\\\\.)*)\",?$", Pattern.MULTILINE);
        Matcher setting = json.matcher(sample);
        while (setting.find()) {
            config.put(setting.group(1), setting.group(2).replace("\\\\", "\\"));
        }
        assertThat(config).containsKeys("connector.class", "target.url", "value.converter");
        assertThat(KafkaSinkConfig.problems(config)).as("problems of the packaged sample").isEmpty();
    }
}
