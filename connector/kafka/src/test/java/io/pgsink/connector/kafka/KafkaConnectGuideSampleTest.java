package io.pgsink.connector.kafka;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The connector example of docs/guides/kafka-connect.md holds every setting of the packaged sample. */
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
}
