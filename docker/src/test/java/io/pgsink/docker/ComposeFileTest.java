package io.pgsink.docker;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Checks {@code docker/compose.yaml} without a Docker engine: the keys it uses exist in the
 * Compose specification, what it refers to (services, files, build contexts) exists, the stack
 * starts without a profile and with profile {@code greenplum}, and it has the services docs/getting-started.md
 * promises. {@link ComposeCliTest} runs {@code docker compose config} on top where a Compose CLI
 * is installed.
 */
class ComposeFileTest
{
    private static final Set<String> TOP_LEVEL = Set.of("name", "services", "networks", "volumes", "configs", "secrets", "include", "models");
    /** The service keys of the Compose specification. */
    private static final Set<String> SERVICE_KEYS = Set.of("annotations", "attach", "blkio_config", "build", "cap_add", "cap_drop", "cgroup", "cgroup_parent",
            "command", "configs", "container_name", "cpu_count", "cpu_percent", "cpu_period", "cpu_quota", "cpu_rt_period", "cpu_rt_runtime", "cpu_shares",
            "cpus", "cpuset", "credential_spec", "depends_on", "deploy", "develop", "device_cgroup_rules", "devices", "dns", "dns_opt", "dns_search",
            "domainname", "entrypoint", "env_file", "environment", "expose", "extends", "external_links", "extra_hosts", "gpus", "group_add",
            "healthcheck", "hostname", "image", "init", "ipc", "isolation", "label_file", "labels", "links", "logging", "mac_address", "mem_limit",
            "mem_reservation", "mem_swappiness", "memswap_limit", "models", "network_mode", "networks", "oom_kill_disable", "oom_score_adj", "pid",
            "pids_limit", "platform", "ports", "post_start", "pre_stop", "privileged", "profiles", "provider", "pull_policy", "read_only", "restart",
            "runtime", "scale", "secrets", "security_opt", "shm_size", "stdin_open", "stop_grace_period", "stop_signal", "storage_opt", "sysctls",
            "tmpfs", "tty", "ulimits", "use_api_socket", "user", "userns_mode", "uts", "volumes", "volumes_from", "working_dir");
    private static final Set<String> BUILD_KEYS = Set.of("context", "dockerfile", "dockerfile_inline", "args", "ssh", "labels", "cache_from", "cache_to",
            "no_cache", "additional_contexts", "network", "pull", "target", "shm_size", "extra_hosts", "isolation", "privileged", "secrets", "tags",
            "ulimits", "platforms", "provenance", "sbom", "entitlements");
    private static final Set<String> HEALTHCHECK_KEYS = Set.of("test", "interval", "timeout", "retries", "start_period", "start_interval", "disable");
    private static final Set<String> DEPENDENCY_KEYS = Set.of("condition", "restart", "required");
    private static final Set<String> CONDITIONS = Set.of("service_started", "service_healthy", "service_completed_successfully");
    private static final Set<String> RESTART_POLICIES = Set.of("no", "always", "on-failure", "unless-stopped");
    /** A ${...} or $NAME that Compose would interpolate from the environment. */
    private static final Pattern INTERPOLATION = Pattern.compile("\\$(\\{[^}]*}|[A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern DURATION = Pattern.compile("(\\d+(\\.\\d+)?(us|ms|s|m|h))+");

    private final ComposeStack stack = ComposeStack.load();

    @Test
    void usesOnlyKeysOfTheComposeSpecification()
    {
        List<String> problems = new ArrayList<>();
        stack.root().fieldNames().forEachRemaining(key -> {
            if (!TOP_LEVEL.contains(key) && !key.startsWith("x-")) {
                problems.add("top-level key " + key + (key.equals("version") ? " (obsolete: Compose ignores it and warns)" : ""));
            }
        });
        for (Map.Entry<String, JsonNode> service : stack.services().entrySet()) {
            String name = service.getKey();
            JsonNode definition = service.getValue();
            assertThat(name).matches("[a-zA-Z0-9._-]+");
            unknownKeys(definition, SERVICE_KEYS, "service " + name, problems);
            if (definition.path("build").isObject()) {
                unknownKeys(definition.path("build"), BUILD_KEYS, "build of " + name, problems);
            }
            if (definition.has("healthcheck")) {
                JsonNode healthcheck = definition.path("healthcheck");
                unknownKeys(healthcheck, HEALTHCHECK_KEYS, "healthcheck of " + name, problems);
                List<String> test = ComposeStack.strings(healthcheck.path("test"));
                if (healthcheck.path("test").isArray() && (test.isEmpty() || !Set.of("CMD", "CMD-SHELL", "NONE").contains(test.get(0)))) {
                    problems.add("healthcheck test of " + name + " must start with CMD, CMD-SHELL or NONE: " + test);
                }
                for (String key : List.of("interval", "timeout", "start_period", "start_interval")) {
                    if (healthcheck.has(key) && !DURATION.matcher(healthcheck.path(key).asText()).matches()) {
                        problems.add("healthcheck " + key + " of " + name + " is not a duration: " + healthcheck.path(key).asText());
                    }
                }
            }
            if (definition.path("depends_on").isObject()) {
                definition.path("depends_on").fields().forEachRemaining(dependency -> {
                    unknownKeys(dependency.getValue(), DEPENDENCY_KEYS, "dependency " + name + " -> " + dependency.getKey(), problems);
                    if (!CONDITIONS.contains(dependency.getValue().path("condition").asText())) {
                        problems.add("dependency " + name + " -> " + dependency.getKey() + " needs a condition of " + CONDITIONS);
                    }
                });
            }
            if (definition.has("restart") && !RESTART_POLICIES.contains(definition.path("restart").asText().replaceFirst(":\\d+$", ""))) {
                problems.add("restart policy of " + name + ": " + definition.path("restart").asText());
            }
            if (!definition.has("image") && !definition.has("build")) {
                problems.add("service " + name + " has neither image nor build");
            }
            for (String field : List.of("command", "entrypoint")) {
                if (definition.has(field) && !definition.path(field).isArray() && !definition.path(field).isTextual()) {
                    problems.add(field + " of " + name + " must be a string or a list of strings");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void referencesResolve()
    {
        Map<String, JsonNode> services = stack.services();
        List<String> problems = new ArrayList<>();
        Map<String, String> hostPorts = new HashMap<>();
        for (Map.Entry<String, JsonNode> service : services.entrySet()) {
            String name = service.getKey();
            JsonNode definition = service.getValue();
            for (String dependency : ComposeStack.dependencies(definition)) {
                JsonNode target = services.get(dependency);
                if (target == null) {
                    problems.add(name + " depends on " + dependency + ", which is no service");
                    continue;
                }
                // a service that starts without a profile cannot wait for one that only starts with it
                if (ComposeStack.profiles(definition).isEmpty() && !ComposeStack.profiles(target).isEmpty()) {
                    problems.add(name + " (no profile) depends on " + dependency + ", which only starts with profile(s) " + ComposeStack.profiles(target));
                }
                String condition = definition.path("depends_on").path(dependency).path("condition").asText();
                if (condition.equals("service_healthy") && !target.has("healthcheck") && !dockerfileHasHealthcheck(target)) {
                    problems.add(name + " waits for " + dependency + " to be healthy, which has no healthcheck");
                }
            }
            for (String volume : ComposeStack.strings(definition.path("volumes"))) {
                if (volume.startsWith(".") || volume.startsWith("/")) {
                    Path source = ComposeStack.DIRECTORY.resolve(volume.substring(0, volume.indexOf(':'))).normalize();
                    if (!Files.exists(source)) {
                        problems.add(name + " mounts " + source + ", which does not exist");
                    }
                }
            }
            for (String port : ComposeStack.strings(definition.path("ports"))) {
                if (!port.matches("(\\d+:)?\\d+(/(tcp|udp))?")) {
                    problems.add(name + " publishes port " + port + "; write HOST:CONTAINER in quotes");
                    continue;
                }
                if (port.contains(":")) {
                    String host = port.substring(0, port.indexOf(':'));
                    String other = hostPorts.put(host, name);
                    if (other != null) {
                        problems.add(name + " and " + other + " both publish host port " + host);
                    }
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void needsNoEnvironmentToInterpolate()
            throws IOException
    {
        // Compose interpolates ${X} and $X everywhere in the file (comments aside); the stack must start
        // with nothing set, and a literal $ must be written $$
        List<String> found = new ArrayList<>();
        for (String line : Files.readAllLines(ComposeStack.COMPOSE_FILE)) {
            if (line.strip().startsWith("#")) {
                continue;
            }
            Matcher matcher = INTERPOLATION.matcher(line.replace("$$", ""));
            while (matcher.find()) {
                if (!matcher.group(1).matches("\\{[A-Za-z_][A-Za-z0-9_]*(:?-)[^}]*}")) {
                    found.add(matcher.group());
                }
            }
        }
        assertThat(found).as("variables without a default").isEmpty();
    }

    @Test
    void hasTheServicesOfTheStack()
    {
        Map<String, JsonNode> services = stack.services();
        assertThat(services).containsKeys("source-postgres", "target-postgres", "greenplum", "kafka", "connect", "connect-setup", "pgsink", "pgsink-greenplum");

        assertThat(String.join(" ", ComposeStack.strings(stack.service("source-postgres").path("command")))).contains("wal_level=logical");
        assertThat(ComposeStack.profiles(stack.service("greenplum"))).containsExactly("greenplum");
        assertThat(ComposeStack.profiles(stack.service("pgsink-greenplum"))).containsExactly("greenplum");
        assertThat(stack.service("greenplum").path("image").asText()).startsWith("woblerr/greenplum:6.");

        // Kafka in KRaft mode: the node is its own controller, no ZooKeeper
        Map<String, String> kafka = ComposeStack.environment(stack.service("kafka"));
        assertThat(stack.service("kafka").path("image").asText()).startsWith("apache/kafka:");
        assertThat(kafka.get("KAFKA_PROCESS_ROLES")).contains("broker").contains("controller");
        assertThat(kafka.get("KAFKA_CONTROLLER_QUORUM_VOTERS")).startsWith(kafka.get("KAFKA_NODE_ID") + "@kafka:");
        assertThat(kafka.keySet()).noneMatch(key -> key.contains("ZOOKEEPER"));
        assertThat(ComposeStack.environment(stack.service("connect")).get("BOOTSTRAP_SERVERS")).isEqualTo(kafka.get("KAFKA_ADVERTISED_LISTENERS").replaceFirst("^PLAINTEXT://", ""));

        assertThat(ComposeStack.build(stack.service("connect")).orElseThrow().dockerfile()).isEqualTo(ComposeStack.DIRECTORY.resolve("connect/Dockerfile"));
        assertThat(ComposeStack.build(stack.service("pgsink")).orElseThrow().dockerfile()).isEqualTo(ComposeStack.DIRECTORY.resolve("pgsink/Dockerfile"));
        assertThat(ComposeStack.build(stack.service("pgsink")).orElseThrow().context()).isEqualTo(ComposeStack.REPOSITORY);
    }

    @Test
    void startsWithoutAndWithEachProfile()
    {
        // what `docker compose up` starts, and what `--profile greenplum` or `monitoring` adds, each closed under depends_on
        for (List<String> active : List.of(List.<String>of(), List.of("greenplum"), List.of("monitoring"))) {
            Map<String, JsonNode> services = stack.services();
            for (Map.Entry<String, JsonNode> service : services.entrySet()) {
                List<String> profiles = ComposeStack.profiles(service.getValue());
                if (!profiles.isEmpty() && profiles.stream().noneMatch(active::contains)) {
                    continue;
                }
                for (String dependency : ComposeStack.dependencies(service.getValue())) {
                    List<String> needed = ComposeStack.profiles(services.get(dependency));
                    assertThat(needed.isEmpty() || needed.stream().anyMatch(active::contains))
                            .as("with profiles %s, %s starts but its dependency %s does not", active, service.getKey(), dependency)
                            .isTrue();
                }
            }
        }
    }

    private static boolean dockerfileHasHealthcheck(JsonNode service)
    {
        return ComposeStack.build(service).map(build -> {
            try {
                return DockerfileInstructions.read(build.dockerfile()).stream().anyMatch(instruction -> instruction.keyword().equals("HEALTHCHECK"));
            }
            catch (IOException e) {
                return false;
            }
        }).orElse(false);
    }

    private static void unknownKeys(JsonNode node, Set<String> known, String where, List<String> problems)
    {
        Iterator<String> names = node.fieldNames();
        while (names.hasNext()) {
            String name = names.next();
            if (!known.contains(name) && !name.startsWith("x-")) {
                problems.add("unknown key " + name + " in " + where);
            }
        }
    }
}
