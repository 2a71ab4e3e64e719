package io.pgsink.reference;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** A generated page checked against the committed file, or rewritten with -Dpgsink.docs.update=true. */
final class GeneratedPage
{
    private GeneratedPage()
    {
    }

    static void check(Path file, String generated, String test)
            throws IOException
    {
        Path committed = Path.of("..", "..").resolve(file);
        if (Boolean.getBoolean(Regeneration.UPDATE_PROPERTY)) {
            Files.createDirectories(committed.getParent());
            Files.writeString(committed, generated, StandardCharsets.UTF_8);
        }
        String command = Regeneration.command(test);
        assertThat(committed).as("%s is generated; create it with:%n%s", file, command).exists();
        assertThat(Files.readString(committed, StandardCharsets.UTF_8))
                .as("%s differs from what the code generates; regenerate it with:%n%s%nthen commit it", file, command)
                .isEqualTo(generated);
    }
}
