package io.pgsink.reference;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the user documentation (README.md, CONTRIBUTING.md, CHANGELOG.md, docs/)
 * names a file that exists and, for a Markdown file, a heading it has (GitHub's anchors).
 */
class DocsLinksTest
{
    private static final Path ROOT = Path.of("..", "..");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern FENCE = Pattern.compile("(?s)```.*?```");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

    @Test
    void everyRelativeLinkResolves()
            throws IOException
    {
        List<String> broken = new ArrayList<>();
        for (Path page : pages()) {
            String text = FENCE.matcher(Files.readString(page, StandardCharsets.UTF_8)).replaceAll("");
            Matcher link = LINK.matcher(text);
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z]+:.*")) {
                    continue;
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such file)");
                }
                else if (hash >= 0 && resolved.toString().endsWith(".md")
                        && !anchors(resolved).contains(target.substring(hash + 1))) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no such heading)");
                }
            }
        }
        assertThat(broken).as("links that resolve to nothing").isEmpty();
    }

    @Test
    void anchorsAreGitHubs()
    {
        assertThat(anchor("Reading Debezium's JSON as bytes (`record.format=debezium-json`)"))
                .isEqualTo("reading-debeziums-json-as-bytes-recordformatdebezium-json");
        assertThat(anchor("One writer per `sink.name`")).isEqualTo("one-writer-per-sinkname");
    }

    private static List<Path> pages()
            throws IOException
    {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md"),
                ROOT.resolve("CHANGELOG.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** The anchors GitHub gives the headings of {@code page}: a repeated heading gets -1, -2... */
    private static Set<String> anchors(Path page)
            throws IOException
    {
        String text = FENCE.matcher(Files.readString(page, StandardCharsets.UTF_8)).replaceAll("");
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher heading = HEADING.matcher(line);
            if (heading.matches()) {
                String anchor = anchor(heading.group(1));
                int count = seen.merge(anchor, 1, Integer::sum);
                anchors.add(count == 1 ? anchor : anchor + "-" + (count - 1));
            }
        }
        return anchors;
    }

    private static String anchor(String heading)
    {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\- _]", "").replace(' ', '-');
    }
}
