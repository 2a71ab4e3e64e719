package io.pgsink.connector.kafka;

import io.pgsink.core.ConfigKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's table of the Kafka Connect sink's own keys is {@link KafkaSinkConfig#KEYS}; this keeps it true. */
class ReadmeKafkaConnectKeysTest
{
    @Test
    void readmeListsEveryConnectorKeyWithItsDefault()
            throws IOException
    {
        StringBuilder table = new StringBuilder();
        for (ConfigKey<?> key : KafkaSinkConfig.KEYS) {
            String defaultValue = key.defaultValue().map(value -> value.isEmpty() ? "(empty)" : "`" + value + "`").orElse("(required)");
            table.append("| `").append(key.name()).append("` | ").append(defaultValue).append(" | ").append(key.documentation().replace("|", "\\|")).append(" |\n");
        }
        Path readme = Path.of("..", "..", "README.md");
        assertThat(readme).exists();
        assertThat(Files.readString(readme)).as("README.md Kafka Connect keys table; expected rows:\n%s", table).contains(table);
    }

    @Test
    void readmeSampleIsThePackagedOne()
            throws IOException
    {
        String sample = Files.readString(Path.of("src", "kafka-connect", "pgsink-sink.json"));
        String readme = Files.readString(Path.of("..", "..", "README.md"));
        // every setting of the packaged sample is in the README's example
        for (String line : sample.split("\n")) {
            String setting = line.strip();
            if (setting.startsWith("\"") && setting.contains("\": \"") && !setting.startsWith("\"name\"") && !setting.startsWith("\"config\"")) {
                assertThat(readme).contains(setting.endsWith(",") ? setting.substring(0, setting.length() - 1) : setting);
            }
        }
    }
}
