package io.pgsink.reference;

import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/reference/cli.md is picocli's usage help of every command. */
class CliReferenceTest
{
    @Test
    void committedPageIsTheGeneratedOne()
            throws IOException
    {
        GeneratedPage.check(CliReference.FILE, CliReference.generate(), "CliReferenceTest");
    }

    @Test
    void everyCommandHasItsSection()
    {
        assertThat(CliReference.generate())
                .contains("## pgsink\n", "## pgsink run\n", "## pgsink check\n", "## pgsink reset\n")
                .contains("## pgsink quickstart\n");
    }
}
