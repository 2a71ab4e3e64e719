package io.pgsink.reference;

import io.pgsink.connector.kafka.KafkaSinkConfig;
import io.pgsink.connector.standalone.config.StandaloneConfig;
import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/reference/configuration.md is what the key declarations generate, and it names every key of
 * both adapters with its default (what the README's key tables were checked for before).
 */
class ConfigurationReferenceTest
{
    @Test
    void committedPageIsTheGeneratedOne()
            throws IOException
    {
        String page = ConfigurationReference.generate();
        GeneratedPage.check(ConfigurationReference.FILE, page, "ConfigurationReferenceTest");
    }

    @Test
    void everyKeyOfBothAdaptersIsListedWithItsDefault()
    {
        String page = ConfigurationReference.generate();
        for (List<ConfigKey<?>> keys : List.of(SinkConfig.KEYS, StandaloneConfig.KEYS, KafkaSinkConfig.KEYS)) {
            for (ConfigKey<?> key : keys) {
                String defaultValue = key.defaultValue()
                        .map(value -> value.isEmpty() ? "(empty)" : "`" + value + "`")
                        .orElse("(required)");
                String row = "\\| `" + Pattern.quote(key.name()) + "` \\| [a-z]+ \\| "
                        + Pattern.quote(defaultValue) + " \\|";
                assertThat(page).as("row of %s", key.name()).containsPattern(row);
            }
        }
        for (String name : KafkaSinkConfig.CONFIG_DEF.names()) {
            assertThat(page).as("Kafka Connect key %s", name).contains("| `" + name + "` |");
        }
    }

    @Test
    void everyDocumentationIsOnThePage()
    {
        String page = ConfigurationReference.generate();
        for (List<ConfigKey<?>> keys : List.of(SinkConfig.KEYS, StandaloneConfig.KEYS, KafkaSinkConfig.KEYS)) {
            for (ConfigKey<?> key : keys) {
                assertThat(page).as("documentation of %s", key.name()).contains(Markdown.cell(key.documentation()));
            }
        }
    }

    @Test
    void tableRowsHaveTheirColumnsWhateverTheDocumentationHolds()
    {
        for (String line : ConfigurationReference.generate().split("\n")) {
            if (line.startsWith("| `")) {
                int cells = line.replace("\\|", "").split("\\|", -1).length - 2;
                assertThat(cells).as("cells of %s", line).isIn(5, 6);
            }
        }
    }

    @Test
    void aValidatorThatDoesNotDescribeItselfShowsNothing()
    {
        String lambda = "io.pgsink.core.config.SinkKeys$$Lambda$625/0x00007f76481a8240@c7045b9";
        assertThat(ConfigurationReference.described(lambda)).isEmpty();
        assertThat(ConfigurationReference.described("[0,...]")).isEqualTo("[0,...]");
        assertThat(ConfigurationReference.generate()).doesNotContain("$$Lambda", "Lambda$");
    }
}
