package io.pgsink.connector.standalone;

import io.pgsink.core.ConfigKey;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's table of the service's own keys is {@link StandaloneConfig#KEYS}; this keeps it true. */
class ReadmeStandaloneKeysTest
{
    @Test
    void readmeListsEveryServiceKeyWithItsDefault()
            throws IOException
    {
        StringBuilder table = new StringBuilder();
        for (ConfigKey<?> key : StandaloneConfig.KEYS) {
            String defaultValue = key.defaultValue().map(value -> value.isEmpty() ? "(empty)" : "`" + value + "`").orElse("(required)");
            table.append("| `").append(key.name()).append("` | ").append(defaultValue).append(" | ").append(key.documentation().replace("|", "\\|")).append(" |\n");
        }
        Path readme = Path.of("..", "..", "README.md");
        assertThat(readme).exists();
        assertThat(Files.readString(readme)).as("README.md service keys table; expected rows:\n%s", table).contains(table);
    }
}
