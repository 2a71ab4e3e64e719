package io.pgsink.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pgsink.docker.DockerfileInstructions.Instruction;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lints the stack's Dockerfiles without a Docker engine: known instructions, a {@code FROM} with a
 * pinned tag first, {@code COPY} sources that exist in the build context compose gives (or are
 * artifacts the connector module builds under those names) and that the Dockerfile's
 * {@code .dockerignore} lets through, exec forms that are valid JSON, numeric ports.
 */
class DockerfileTest
{
    private static final Pattern VARIABLE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}|\\$([A-Za-z_][A-Za-z0-9_]*)");
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyDockerfileIsBuiltByComposeAndEveryBuildHasOne()
            throws IOException
    {
        Set<Path> built = new HashSet<>();
        for (Map.Entry<String, JsonNode> service : ComposeStack.load().services().entrySet()) {
            ComposeStack.build(service.getValue()).ifPresent(build -> {
                assertThat(build.context()).as("build context of service %s", service.getKey()).isDirectory();
                assertThat(build.dockerfile()).as("Dockerfile of service %s", service.getKey()).isRegularFile();
                built.add(build.dockerfile());
            });
        }
        assertThat(dockerfiles()).containsExactlyInAnyOrderElementsOf(built);
    }

    @Test
    void dockerfilesAreValid()
            throws Exception
    {
        Map<Path, Path> contexts = new HashMap<>();
        for (JsonNode service : ComposeStack.load().services().values()) {
            ComposeStack.build(service).ifPresent(build -> contexts.put(build.dockerfile(), build.context()));
        }
        Set<String> artifacts = connectorArtifacts();
        for (Path dockerfile : dockerfiles()) {
            List<String> problems = problems(dockerfile, contexts.get(dockerfile), artifacts);
            assertThat(problems).as("problems of %s", ComposeStack.REPOSITORY.relativize(dockerfile)).isEmpty();
        }
    }

    @Test
    void lintFindsWhatItLooksFor()
            throws Exception
    {
        Path dockerfile = Files.createTempDirectory("dockerfile-test").resolve("Dockerfile");
        Files.writeString(dockerfile, """
                # syntax=docker/dockerfile:1
                RUN echo too early
                FROM eclipse-temurin
                ARG LATE=connector/target/missing.jar
                COPY ${LATE} \\
                    docker/absent.properties /opt/
                COPY --from=builder /x /y
                CMD ["run", "--config"
                EXPOSE http
                FORM typo
                """);
        Files.writeString(dockerfile.resolveSibling("Dockerfile.dockerignore"), "*\n");
        assertThat(problems(dockerfile, ComposeStack.REPOSITORY, connectorArtifacts())).containsExactly(
                "line 2: RUN before the first FROM",
                "line 3: image eclipse-temurin has no tag (pin one)",
                "line 5: COPY source connector/target/missing.jar is neither in the build context nor an artifact of the connector module " + connectorArtifacts(),
                "line 5: COPY source connector/target/missing.jar is excluded by Dockerfile.dockerignore",
                "line 5: COPY source docker/absent.properties is neither in the build context nor an artifact of the connector module " + connectorArtifacts(),
                "line 5: COPY source docker/absent.properties is excluded by Dockerfile.dockerignore",
                "line 7: COPY --from=builder names no earlier stage",
                "line 8: CMD is not a JSON array of strings: [\"run\", \"--config\"",
                "line 9: EXPOSE http is not a port",
                "line 10: unknown instruction FORM");
    }

    private static List<Path> dockerfiles()
            throws IOException
    {
        try (Stream<Path> files = Files.walk(ComposeStack.DIRECTORY)) {
            return files.filter(file -> file.getFileName().toString().equals("Dockerfile") && !file.startsWith(ComposeStack.DIRECTORY.resolve("target"))).toList();
        }
    }

    static List<String> problems(Path dockerfile, Path context, Set<String> artifacts)
            throws IOException
    {
        List<String> problems = new ArrayList<>();
        Map<String, String> globalArguments = new HashMap<>();
        Map<String, String> stageArguments = new HashMap<>();
        Set<String> stages = new HashSet<>();
        boolean sawFrom = false;
        for (Instruction instruction : DockerfileInstructions.read(dockerfile)) {
            String where = "line " + instruction.line() + ": ";
            String arguments = instruction.arguments();
            if (!DockerfileInstructions.KEYWORDS.contains(instruction.keyword())) {
                problems.add(where + "unknown instruction " + instruction.keyword());
                continue;
            }
            if (!sawFrom && !instruction.keyword().equals("FROM") && !instruction.keyword().equals("ARG")) {
                problems.add(where + instruction.keyword() + " before the first FROM");
                continue;
            }
            switch (instruction.keyword()) {
                case "ARG" -> {
                    String[] nameAndDefault = arguments.split("=", 2);
                    (sawFrom ? stageArguments : globalArguments).put(nameAndDefault[0], nameAndDefault.length > 1 ? nameAndDefault[1] : null);
                }
                case "FROM" -> {
                    sawFrom = true;
                    stageArguments = new HashMap<>();
                    List<String> words = words(arguments);
                    String image = substitute(words.get(0).startsWith("--platform") ? words.get(1) : words.get(0), globalArguments);
                    if (image == null) {
                        problems.add(where + "FROM " + arguments + " uses an ARG without a default");
                    }
                    else if (!stages.contains(image) && !image.equals("scratch") && !image.substring(image.lastIndexOf('/') + 1).contains(":")) {
                        problems.add(where + "image " + image + " has no tag (pin one)");
                    }
                    int as = words.indexOf("AS") >= 0 ? words.indexOf("AS") : words.indexOf("as");
                    if (as >= 0 && as + 1 < words.size()) {
                        stages.add(words.get(as + 1));
                    }
                }
                case "COPY", "ADD" -> {
                    List<String> words = words(arguments);
                    String from = null;
                    while (!words.isEmpty() && words.get(0).startsWith("--")) {
                        String option = words.remove(0);
                        if (option.startsWith("--from=")) {
                            from = option.substring("--from=".length());
                        }
                    }
                    if (from != null) {
                        if (!stages.contains(from)) {
                            problems.add(where + instruction.keyword() + " --from=" + from + " names no earlier stage");
                        }
                        continue;
                    }
                    Map<String, String> visible = new HashMap<>(globalArguments);
                    visible.putAll(stageArguments);
                    for (String source : words.subList(0, words.size() - 1)) {
                        String path = substitute(source, visible);
                        if (path == null) {
                            problems.add(where + instruction.keyword() + " source " + source + " uses an ARG without a default");
                            continue;
                        }
                        if (!existsIn(context, path) && !matchesArtifact(path, artifacts)) {
                            problems.add(where + instruction.keyword() + " source " + path + " is neither in the build context nor an artifact of the connector module " + artifacts);
                        }
                        Path ignoreFile = dockerfile.resolveSibling(dockerfile.getFileName() + ".dockerignore");
                        if (Files.isRegularFile(ignoreFile) && !sentToBuild(path, Files.readAllLines(ignoreFile))) {
                            problems.add(where + instruction.keyword() + " source " + path + " is excluded by " + ignoreFile.getFileName());
                        }
                    }
                }
                case "CMD", "ENTRYPOINT" -> checkExecForm(instruction.keyword(), arguments, where, problems);
                case "HEALTHCHECK" -> {
                    String command = arguments.replaceAll("--[a-z-]+=\\S+\\s*", "").strip();
                    if (!command.equals("NONE")) {
                        if (!command.startsWith("CMD ")) {
                            problems.add(where + "HEALTHCHECK needs CMD or NONE: " + arguments);
                        }
                        else {
                            checkExecForm("HEALTHCHECK CMD", command.substring(4).strip(), where, problems);
                        }
                    }
                }
                case "EXPOSE" -> {
                    for (String port : words(arguments)) {
                        if (!port.matches("\\d{1,5}(/(tcp|udp))?")) {
                            problems.add(where + "EXPOSE " + port + " is not a port");
                        }
                    }
                }
                default -> {
                }
            }
        }
        if (!sawFrom) {
            problems.add("no FROM");
        }
        return problems;
    }

    private static void checkExecForm(String what, String arguments, String where, List<String> problems)
    {
        if (!arguments.startsWith("[")) {
            return;
        }
        try {
            JsonNode node = JSON.readTree(arguments);
            boolean strings = node.isArray() && node.size() > 0;
            for (JsonNode element : node) {
                strings &= element.isTextual();
            }
            if (!strings) {
                problems.add(where + what + " is not a JSON array of strings: " + arguments);
            }
        }
        catch (IOException e) {
            problems.add(where + what + " is not a JSON array of strings: " + arguments);
        }
    }

    /** Whitespace-separated words; the mutable list lets options be taken off the front. */
    private static List<String> words(String arguments)
    {
        return new ArrayList<>(List.of(arguments.strip().split("\\s+")));
    }

    /** {@code text} with ARG references replaced by their defaults; null when one has none. */
    private static String substitute(String text, Map<String, String> arguments)
    {
        Matcher matcher = VARIABLE.matcher(text);
        StringBuilder result = new StringBuilder();
        while (matcher.find()) {
            String name = matcher.group(1) != null ? matcher.group(1) : matcher.group(2);
            String value = arguments.get(name);
            if (value == null) {
                return null;
            }
            matcher.appendReplacement(result, Matcher.quoteReplacement(value));
        }
        matcher.appendTail(result);
        return result.toString();
    }

    private static boolean existsIn(Path context, String source)
            throws IOException
    {
        if (!source.contains("*") && !source.contains("?")) {
            return Files.exists(context.resolve(source));
        }
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + source);
        Path parent = context.resolve(source).getParent();
        if (!Files.isDirectory(parent)) {
            return false;
        }
        try (Stream<Path> files = Files.list(parent)) {
            return files.anyMatch(file -> matcher.matches(context.relativize(file)));
        }
    }

    private static boolean matchesArtifact(String source, Set<String> artifacts)
    {
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + source);
        return artifacts.stream().anyMatch(artifact -> matcher.matches(Path.of(artifact)));
    }

    /**
     * Whether a build-context path survives an ignore file: the last pattern that matches it (or,
     * for an exclusion, one of its parent directories) decides; {@code !} patterns re-include.
     */
    static boolean sentToBuild(String source, List<String> ignoreLines)
    {
        boolean sent = true;
        Path path = Path.of(source);
        for (String line : ignoreLines) {
            String pattern = line.strip();
            if (pattern.isEmpty() || pattern.startsWith("#")) {
                continue;
            }
            boolean exception = pattern.startsWith("!");
            PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + (exception ? pattern.substring(1) : pattern));
            boolean matches = matcher.matches(path);
            for (Path parent = path.getParent(); !exception && !matches && parent != null; parent = parent.getParent()) {
                matches = matcher.matches(parent);
            }
            if (matches) {
                sent = exception;
            }
        }
        return sent;
    }

    /**
     * The files the connector modules build into their {@code target} folders, relative to the
     * repository root, as their poms name them: the shaded runnable jar (standalone) and the
     * plugin archive (Kafka Connect).
     */
    static Set<String> connectorArtifacts()
            throws Exception
    {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        Document parent = factory.newDocumentBuilder().parse(ComposeStack.REPOSITORY.resolve("pom.xml").toFile());
        String version = text(parent.getDocumentElement(), "version");
        Set<String> artifacts = new TreeSet<>();
        for (String module : List.of("connector/standalone", "connector/kafka")) {
            Document pom = factory.newDocumentBuilder().parse(ComposeStack.REPOSITORY.resolve(module).resolve("pom.xml").toFile());
            NodeList plugins = pom.getElementsByTagName("plugin");
            for (int i = 0; i < plugins.getLength(); i++) {
                Element plugin = (Element) plugins.item(i);
                String artifactId = text(plugin, "artifactId");
                NodeList finalNames = plugin.getElementsByTagName("finalName");
                for (int j = 0; j < finalNames.getLength(); j++) {
                    String name = finalNames.item(j).getTextContent().strip().replace("${project.version}", version);
                    if (artifactId.equals("maven-shade-plugin")) {
                        artifacts.add(module + "/target/" + name + ".jar");
                    }
                    else if (artifactId.equals("maven-assembly-plugin")) {
                        NodeList descriptors = plugin.getElementsByTagName("descriptor");
                        for (int k = 0; k < descriptors.getLength(); k++) {
                            Document descriptor = factory.newDocumentBuilder().parse(ComposeStack.REPOSITORY.resolve(module).resolve(descriptors.item(k).getTextContent().strip()).toFile());
                            NodeList formats = descriptor.getElementsByTagName("format");
                            for (int f = 0; f < formats.getLength(); f++) {
                                artifacts.add(module + "/target/" + name + "." + formats.item(f).getTextContent().strip());
                            }
                        }
                    }
                }
            }
        }
        return artifacts;
    }

    /** The text of the first child element of {@code element} with that name. */
    private static String text(Element element, String name)
    {
        NodeList children = element.getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            if (children.item(i) instanceof Element child && child.getTagName().equals(name)) {
                return child.getTextContent().strip();
            }
        }
        return "";
    }

    @Test
    void connectorArtifactsAreTheJarAndThePluginArchive()
            throws Exception
    {
        assertThat(connectorArtifacts()).hasSize(3).contains("connector/standalone/target/pgsink.jar")
                .anyMatch(artifact -> artifact.matches("connector/standalone/target/pgsink-\\d[^/]*\\.tar\\.gz"))
                .anyMatch(artifact -> artifact.matches("connector/kafka/target/pgsink-kafka-connect-\\d[^/]*\\.zip"));
        assertThat(sentToBuild("connector/standalone/target/pgsink.jar", List.of("*", "!connector/standalone/target/pgsink.jar"))).isTrue();
        assertThat(sentToBuild("connector/standalone/target/pgsink.jar", List.of("*", "!connector/kafka/target/*.zip"))).isFalse();
        assertThat(sentToBuild("docker/config/a.properties", List.of("target"))).isTrue();
    }

    @Test
    void theStandaloneImageRunsTheDistributionLauncher()
            throws Exception
    {
        List<Instruction> instructions = DockerfileInstructions.read(ComposeStack.DIRECTORY.resolve(
                "pgsink/Dockerfile"));
        assertThat(instructions).anyMatch(instruction -> instruction.keyword().equals("COPY")
                && instruction.arguments().startsWith("connector/standalone/target/pgsink-*.tar.gz "));
        assertThat(instructions).filteredOn(instruction -> instruction.keyword().equals("ENTRYPOINT"))
                .singleElement().extracting(Instruction::arguments).isEqualTo("[\"/opt/pgsink/bin/pgsink\"]");
    }
}
