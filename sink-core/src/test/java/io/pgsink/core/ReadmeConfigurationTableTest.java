package io.pgsink.core;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's configuration reference is generated from {@link SinkConfig#KEYS}; this keeps it true. */
class ReadmeConfigurationTableTest
{
    static String table()
    {
        StringBuilder table = new StringBuilder();
        for (ConfigKey<?> key : SinkConfig.KEYS) {
            String defaultValue = key.defaultValue().map(value -> value.isEmpty() ? "(empty)" : "`" + value + "`").orElse("(required)");
            table.append("| `").append(key.name()).append("` | ").append(defaultValue).append(" | ").append(key.documentation().replace("|", "\\|")).append(" |\n");
        }
        return table.toString();
    }

    @Test
    void readmeListsEveryKeyWithItsDefault()
            throws IOException
    {
        Path readme = Path.of("..", "README.md");
        assertThat(readme).exists();
        assertThat(Files.readString(readme)).as("README.md configuration table; expected rows:\n%s", table()).contains(table());
    }
}
