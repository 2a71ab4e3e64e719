package io.pgsink.connector.standalone.config;

import io.pgsink.core.config.SinkConfig;
import io.pgsink.core.config.definition.ConfigKey;
import io.pgsink.core.config.definition.ConfigProblem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static io.pgsink.connector.standalone.config.StandaloneConfig.ENVIRONMENT_NAMESPACES;
import static io.pgsink.connector.standalone.config.StandaloneConfig.ENVIRONMENT_PREFIX;
import static io.pgsink.connector.standalone.config.StandaloneConfig.SOURCE_PREFIX;
import static io.pgsink.connector.standalone.config.StandaloneConfig.declaredKeys;

/**
 * The {@code PGSINK_*} environment variables over the configuration file. An environment variable
 * {@code PGSINK_<KEY>} overrides key {@code <key>}: the name upper-cased, with {@code .} and
 * {@code -} as {@code _} ({@code PGSINK_TARGET_PASSWORD} sets {@code target.password},
 * {@code PGSINK_SOURCE_DATABASE_HOSTNAME} sets {@code source.database.hostname}). Every declared
 * key ({@link StandaloneConfig#declaredKeys()}) can be set so, and every key of the file. A
 * variable that matches none of them becomes the key with {@code _} read as {@code .} under
 * {@code source.} and {@code target.jdbc.}, whose keys pgsink passes on (Debezium's, the
 * driver's). A variable in another of pgsink's namespaces
 * ({@link StandaloneConfig#ENVIRONMENT_NAMESPACES}, the first words of the declared keys) that
 * names no key is a configuration problem, as an unknown key in the file is: a misspelled variable
 * would otherwise be a setting silently not applied. {@code PGSINK_*} variables outside every
 * namespace (the tests' {@code PGSINK_TEST_JDBC_URL}, say) are not configuration: they are logged
 * and ignored.
 */
final class EnvironmentOverrides
{
    // the configuration's category, which users' log settings name
    private static final Logger log = LoggerFactory.getLogger(StandaloneConfig.class);

    /** Variables {@code PGSINK_TEST_*} belong to the test suite, never to the service. */
    private static final String TEST_NAMESPACE = "test.";
    /** Keys under these are passed on (Debezium's, the JDBC driver's): a variable in them needs no declared key. */
    static final List<String> PASS_THROUGH_NAMESPACES = List.of(SOURCE_PREFIX, SinkConfig.TARGET_JDBC_PREFIX);

    private EnvironmentOverrides() {}

    static List<String> namespaces()
    {
        Set<String> namespaces = new TreeSet<>(PASS_THROUGH_NAMESPACES);
        for (ConfigKey<?> key : declaredKeys()) {
            namespaces.add(key.name().substring(0, key.name().indexOf('.') + 1));
        }
        return List.copyOf(namespaces);
    }

    /**
     * {@code properties} with the {@code PGSINK_*} variables of {@code environment} applied; a
     * variable in one of pgsink's namespaces that names no key is added to {@code problems}.
     */
    static Map<String, String> withEnvironment(Map<String, String> properties, Map<String, String> environment,
            List<ConfigProblem> problems)
    {
        Map<String, String> byVariable = new TreeMap<>();
        for (ConfigKey<?> key : declaredKeys()) {
            byVariable.put(variableName(key.name()), key.name());
        }
        for (String key : properties.keySet()) {
            // the file's spelling wins: target.jdbc.ApplicationName keeps its case
            byVariable.put(variableName(key), key);
        }
        Map<String, String> result = new TreeMap<>(properties);
        for (Map.Entry<String, String> entry : new TreeMap<>(environment).entrySet()) {
            String variable = entry.getKey();
            if (!variable.startsWith(ENVIRONMENT_PREFIX) || variable.length() == ENVIRONMENT_PREFIX.length()) {
                continue;
            }
            String key = byVariable.get(variable);
            if (key == null) {
                String candidate = variable.substring(ENVIRONMENT_PREFIX.length()).toLowerCase(Locale.ROOT)
                        .replace('_', '.');
                if (PASS_THROUGH_NAMESPACES.stream().anyMatch(candidate::startsWith)) {
                    key = candidate;
                }
                else if (ENVIRONMENT_NAMESPACES.stream().anyMatch(candidate::startsWith)) {
                    problems.add(ConfigProblem.unknown(candidate, "environment variable " + variable
                            + " names no pgsink key (each key K is set by PGSINK_ and K upper-cased"
                            + " with . and - as _, e.g. " + variableName(SinkConfig.FLUSH_MAX_EVENTS)
                            + "); remove it or correct its name"));
                    continue;
                }
                else if (candidate.startsWith(TEST_NAMESPACE)) {
                    // the test suite's own variables (PGSINK_TEST_JDBC_URL, ...): not worth a warning
                    log.debug("environment variable {} is the test suite's, not pgsink configuration: ignored",
                            variable);
                    continue;
                }
                else {
                    log.warn("environment variable {} is not pgsink configuration (no pgsink key starts with {}): "
                            + "ignored", variable,
                            candidate.contains(".") ? candidate.substring(0, candidate.indexOf('.') + 1) : candidate);
                    continue;
                }
            }
            result.put(key, entry.getValue());
        }
        return result;
    }

    /** {@code target.password} → {@code PGSINK_TARGET_PASSWORD}. */
    static String variableName(String key)
    {
        return ENVIRONMENT_PREFIX + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }
}
