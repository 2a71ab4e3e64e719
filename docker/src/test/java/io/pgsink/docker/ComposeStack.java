package io.pgsink.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/** The files of {@code docker/} and the compose file read as a tree, for the static checks. */
final class ComposeStack
{
    /** The module directory, {@code docker/}: Maven runs the tests there. */
    static final Path DIRECTORY = locate();
    static final Path REPOSITORY = DIRECTORY.getParent();
    static final Path COMPOSE_FILE = DIRECTORY.resolve("compose.yaml");

    private final JsonNode root;

    private ComposeStack(JsonNode root)
    {
        this.root = requireNonNull(root, "root is null");
    }

    static ComposeStack load()
    {
        try {
            return new ComposeStack(new YAMLMapper().readTree(COMPOSE_FILE.toFile()));
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot read " + COMPOSE_FILE, e);
        }
    }

    private static Path locate()
    {
        Path directory = Path.of("").toAbsolutePath();
        if (!Files.isRegularFile(directory.resolve("compose.yaml")) && Files.isRegularFile(directory.resolve("docker/compose.yaml"))) {
            directory = directory.resolve("docker");
        }
        return directory;
    }

    JsonNode root()
    {
        return root;
    }

    /** Services by name, in file order. */
    Map<String, JsonNode> services()
    {
        Map<String, JsonNode> services = new java.util.LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> fields = root.path("services").fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            services.put(field.getKey(), field.getValue());
        }
        return services;
    }

    JsonNode service(String name)
    {
        JsonNode service = root.path("services").path(name);
        if (service.isMissingNode()) {
            throw new AssertionError("compose.yaml has no service " + name);
        }
        return service;
    }

    static List<String> profiles(JsonNode service)
    {
        return strings(service.path("profiles"));
    }

    /** The service's environment, in map or list form, as a map. */
    static Map<String, String> environment(JsonNode service)
    {
        Map<String, String> environment = new TreeMap<>();
        JsonNode node = service.path("environment");
        if (node.isObject()) {
            node.fields().forEachRemaining(field -> environment.put(field.getKey(), field.getValue().asText()));
        }
        else {
            for (String entry : strings(node)) {
                int equals = entry.indexOf('=');
                environment.put(equals < 0 ? entry : entry.substring(0, equals), equals < 0 ? "" : entry.substring(equals + 1));
            }
        }
        return environment;
    }

    /** The names of the services it depends on, in short or long form. */
    static List<String> dependencies(JsonNode service)
    {
        JsonNode node = service.path("depends_on");
        if (node.isArray()) {
            return strings(node);
        }
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** Where the Dockerfile of a service with {@code build} is, and its build context. */
    static Optional<Build> build(JsonNode service)
    {
        JsonNode build = service.path("build");
        if (build.isMissingNode()) {
            return Optional.empty();
        }
        Path context = DIRECTORY.resolve(build.isTextual() ? build.asText() : build.path("context").asText(".")).normalize();
        Path dockerfile = context.resolve(build.path("dockerfile").asText("Dockerfile")).normalize();
        return Optional.of(new Build(context, dockerfile));
    }

    record Build(Path context, Path dockerfile) {}

    static List<String> strings(JsonNode node)
    {
        List<String> strings = new ArrayList<>();
        if (node.isArray()) {
            node.forEach(element -> strings.add(element.asText()));
        }
        else if (node.isTextual()) {
            strings.add(node.asText());
        }
        return strings;
    }
}
